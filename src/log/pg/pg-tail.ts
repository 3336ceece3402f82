/**
 * How a node learns that the shared log moved: LISTEN on the log's channel (each commit batch
 * NOTIFYs its new head once) as a fast hint, and a poll of `el_head` as the fallback that needs no
 * notification to arrive (NOTIFY is not replayed to a session that was reconnecting). The LISTEN
 * connection is a session of its own and reconnects after a loss; it must not go through a
 * transaction-mode pooler.
 */
import pg from 'pg';
import { CHANNEL } from './schema.js';

export interface TailOptions {
  connectionString: string;
  /** polling period of the fallback, ms */
  pollMs: number;
  /** called with a global head known to be committed (may repeat or go backwards: take the max) */
  onHead: (seq: number) => void;
  /** reads the current head for the poll */
  readHead: () => Promise<number>;
  onError: (err: unknown) => void;
}

export class LogTail {
  private listener: pg.Client | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private polling = false;

  constructor(private readonly opts: TailOptions) {}

  async start(): Promise<void> {
    await this.listen();
    this.pollTimer = setInterval(() => void this.poll(), this.opts.pollMs);
    this.pollTimer.unref();
  }

  /** Asks for a poll now (e.g. when a reader knows it is behind). */
  async poll(): Promise<void> {
    if (this.polling || this.stopped) return;
    this.polling = true;
    try {
      this.opts.onHead(await this.opts.readHead());
    } catch (err) {
      if (!this.stopped) this.opts.onError(err);
    } finally {
      this.polling = false;
    }
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.opts.connectionString, application_name: 'eventloom-tail' });
    client.on('notification', (msg) => {
      const seq = Number(msg.payload);
      if (Number.isSafeInteger(seq)) this.opts.onHead(seq);
    });
    const lost = (err?: unknown) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      client.end().catch(() => undefined);
      if (this.stopped) return;
      if (err) this.opts.onError(err);
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = undefined;
        // a failed reconnect schedules the next attempt through `lost`
        this.listen().then(
          () => this.poll(),
          () => undefined,
        );
      }, 1000);
      this.reconnectTimer.unref();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    this.listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      lost(err);
      throw err;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const l = this.listener;
    this.listener = undefined;
    await l?.end().catch(() => undefined);
  }
}
