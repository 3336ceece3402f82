/**
 * A committed record of the event log: the one type the log contract (types.ts) and the stores'
 * capabilities (capabilities.ts) both speak of, in a file of its own so neither imports the other.
 */

/** A committed record. `seq` is global and gap-free (save where retention removed streams: removal capability); `streamSeq` is 1-based within `stream`. */
export interface LogRecord<T = unknown> {
  seq: number;
  stream: string;
  streamSeq: number;
  type: string;
  data: T;
  /** epoch milliseconds, from the injected clock of the appender */
  at: number;
  /** machine kind@version of the stream's actor, on the first record of a stream */
  kind?: string;
  causation?: number;
  correlation?: string;
}
