/**
 * RxJS views of an EventLog for projections and feeds (`committed$` of docs/design-notes.md "One log, actors and projections"). They wrap
 * `subscribe`, which stays the contract: catch-up then live, each record once, in global order.
 */
import { Observable, share } from 'rxjs';
import type { EventLog, LogRecord, SubscribeOptions } from './types.js';

/** Every record with `seq > afterSeq`: catch-up from storage, then live commits (of other nodes, those `options.interest` names). */
export function records$(log: EventLog, afterSeq = 0, options?: SubscribeOptions): Observable<LogRecord> {
  return new Observable<LogRecord>((subscriber) => {
    const sub = log.subscribe(afterSeq, (record) => subscriber.next(record), options);
    return () => sub.unsubscribe();
  });
}

/**
 * Records committed from the moment of the first subscription on, shared by all observers (one
 * log subscription however many observers). Late observers only see what commits after they join.
 */
export function liveRecords(log: EventLog): Observable<LogRecord> {
  return new Observable<LogRecord>((subscriber) => {
    const sub = log.subscribe(log.head(), (record) => subscriber.next(record));
    return () => sub.unsubscribe();
  }).pipe(share());
}
