/**
 * Commands for a stream another node owns reach that node through the database, not node-to-node
 * HTTP: the receiving node stores the request in `el_inbox` for the owner and NOTIFYs; the owner
 * takes it (a compare-and-set on `taken_at`), runs the route locally and stores the answer; the
 * receiving node, woken by a second NOTIFY (or its poll), returns that answer to its client.
 * Both sides also poll, so a lost notification only costs a poll period. An owner that does not
 * answer in time (it stopped; takeover will follow) gets the client a 503.
 */
import pg from 'pg';
import type { StreamFollow } from '../contract/routes.js';

/** What the owner needs to run a route as the receiving node would have. */
export interface ForwardedRequest {
  method: string;
  /** the route's path pattern, which names the route */
  routePath: string;
  path: string;
  params: Record<string, string>;
  query: Record<string, unknown>;
  rawQuery: string;
  headers: Record<string, string>;
  body: unknown;
  user?: Record<string, unknown>;
  origin: string;
}

/**
 * The answer as the client gets it: a status and a JSON body (null for 204), with the answer's headers; a file's
 * bytes in base64 with its content type; or, for a stream, the read route that serves it from the log on the
 * receiving node (cluster-routes.ts).
 */
export interface ForwardedResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** a file answer: `body` is its bytes in base64 */
  contentType?: string;
  follow?: StreamFollow;
}

export interface InboxOptions {
  nodeId: string;
  /** polling period of both sides, ms (default 200) */
  pollMs?: number;
  /** how long the receiving node waits for the owner, ms (default 15000) */
  timeoutMs?: number;
}

const REQUESTS = 'eventloom_inbox';
const ANSWERS = 'eventloom_inbox_done';
/** requests older than this are stale: their sender gave up */
const STALE_MS = 60_000;

const QUERY_TIMEOUT_MS = 5_000;

export class CommandInbox {
  private readonly pool: pg.Pool;
  private listener: pg.Client | undefined;
  private readonly waiting = new Map<number, () => void>();
  private executor: ((req: ForwardedRequest) => Promise<ForwardedResponse>) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private closed = false;
  private taking = false;
  private ticks = 0;
  private readonly pollMs: number;
  private readonly timeoutMs: number;

  constructor(
    private readonly connectionString: string,
    private readonly opts: InboxOptions,
  ) {
    // bounded queries: a poll sent to a server cut off by the network must not hold the inbox forever
    this.pool = new pg.Pool({ connectionString, max: 2, query_timeout: QUERY_TIMEOUT_MS, keepAlive: true, application_name: 'eventloom-inbox' });
    this.pool.on('error', () => undefined);
    this.pollMs = opts.pollMs ?? 200;
    this.timeoutMs = opts.timeoutMs ?? 15_000;
  }

  async start(): Promise<void> {
    await this.listen();
    this.timer = setInterval(() => {
      void this.take();
      // requests whose sender stopped before reading the answer
      if (++this.ticks % 300 === 0) void this.pool.query(`DELETE FROM el_inbox WHERE created_at < now() - $1 * interval '1 millisecond'`, [10 * STALE_MS]).catch(() => undefined);
      for (const [id, wake] of this.waiting) void this.answered(id).then((yes) => yes && wake());
    }, this.pollMs);
    this.timer.unref();
  }

  /** Starts running commands other nodes forward to this one. */
  serve(executor: (req: ForwardedRequest) => Promise<ForwardedResponse>): void {
    this.executor = executor;
    void this.take();
  }

  /** Sends `req` to `target` and resolves with its answer (503 when it does not answer in time). */
  async forward(target: string, req: ForwardedRequest): Promise<ForwardedResponse> {
    const r = await this.pool.query<{ id: string }>(
      `WITH r AS (INSERT INTO el_inbox (target, request) VALUES ($1, $2) RETURNING id)
       SELECT id, pg_notify('${REQUESTS}', id || ' ' || $1) FROM r`,
      [target, JSON.stringify(req)],
    );
    const id = Number(r.rows[0].id);
    try {
      const woken = new Promise<void>((resolve) => this.waiting.set(id, resolve));
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), this.timeoutMs)));
      await Promise.race([woken, timedOut]);
      clearTimeout(timer);
      // the row goes either way: answered, or given up (an owner taking it late answers nobody)
      const row = await this.pool.query<{ response: string | null }>('DELETE FROM el_inbox WHERE id = $1 RETURNING response', [id]);
      const response = row.rows[0]?.response;
      if (response) return JSON.parse(response) as ForwardedResponse;
      return {
        status: 503,
        body: { success: false, error: `Node ${target} runs this stream and did not answer within ${this.timeoutMs} ms; retry (a stopped node's work is taken over after its lease)` },
      };
    } finally {
      this.waiting.delete(id);
    }
  }

  private async answered(id: number): Promise<boolean> {
    if (this.closed) return false;
    const r = await this.pool.query('SELECT 1 FROM el_inbox WHERE id = $1 AND response IS NOT NULL', [id]).catch(() => undefined);
    return (r?.rowCount ?? 0) > 0;
  }

  /** Takes this node's pending requests (one, when a notification named it) and answers them. */
  private async take(only?: number): Promise<void> {
    if (!this.executor || this.closed || (this.taking && only === undefined)) return;
    if (only === undefined) this.taking = true;
    try {
      const r = await this.pool.query<{ id: string; request: string }>(
        `UPDATE el_inbox SET taken_at = now()
         WHERE target = $1 AND taken_at IS NULL AND created_at > now() - $2 * interval '1 millisecond' AND ($3::bigint IS NULL OR id = $3)
         RETURNING id, request`,
        [this.opts.nodeId, STALE_MS, only ?? null],
      );
      await Promise.all(r.rows.map((row) => this.answer(Number(row.id), JSON.parse(row.request) as ForwardedRequest)));
    } catch {
      // the next poll tries again
    } finally {
      if (only === undefined) this.taking = false;
    }
  }

  private async answer(id: number, req: ForwardedRequest): Promise<void> {
    let response: ForwardedResponse;
    try {
      response = await this.executor!(req);
    } catch (err) {
      response = { status: 500, body: { success: false, error: `The owner node failed to run the command: ${(err as Error)?.message ?? String(err)}` } };
    }
    await this.pool.query(`WITH u AS (UPDATE el_inbox SET response = $2 WHERE id = $1 RETURNING id) SELECT pg_notify('${ANSWERS}', id::text) FROM u`, [id, JSON.stringify(response)]);
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString, application_name: 'eventloom-inbox-listen' });
    client.on('notification', (msg) => {
      if (msg.channel === REQUESTS) {
        const [id, target] = (msg.payload ?? '').split(' ');
        if (target === this.opts.nodeId) void this.take(Number(id));
      } else if (msg.channel === ANSWERS) {
        this.waiting.get(Number(msg.payload))?.();
      }
    });
    const lost = () => {
      if (this.listener !== client) return;
      this.listener = undefined;
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.reconnect = setTimeout(() => void this.listen().catch(() => undefined), 1000);
      this.reconnect.unref();
    };
    client.on('error', lost);
    client.on('end', lost);
    this.listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${REQUESTS}; LISTEN ${ANSWERS}`);
    } catch (err) {
      lost();
      throw err;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.reconnect) clearTimeout(this.reconnect);
    for (const wake of this.waiting.values()) wake();
    const l = this.listener;
    this.listener = undefined;
    await l?.end().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}
