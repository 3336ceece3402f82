/**
 * The bare servers `npm run bench:floors` measures eventloom against, each a child process of its
 * own (so its CPU time is read from /proc like the real server's) that prints
 * `floor listening on <port>` once ready:
 *
 * - `static <body-file> <path>`: bare uWebSockets.js answering `GET <path>` with the bytes of the
 *   file (the exact body eventloom sends) and eventloom's content type. Nothing else runs per
 *   request: the floor of a read-only GET.
 * - `durable <fixture-file> <data-dir>`: bare uWebSockets.js + classic-level. Every
 *   `POST /execute` reads its body, puts the key/value pairs one echo execution writes (same
 *   count, same value bytes, keys of the same length and key space; fixture from `floors.ts`)
 *   into the open batch, and answers with the captured response once that batch is written with
 *   `sync: true`. Group commit as the log does it: one batch in flight, the next one collecting,
 *   flushed on `setImmediate`. The floor of a durable execute: fsync before every answer.
 */
import { readFileSync } from 'node:fs';
import { ClassicLevel } from 'classic-level';
import uWS, { type HttpResponse } from 'uWebSockets.js';

export interface DurableFixture {
  /** what one execution writes, in order: key space byte, key length, value */
  writes: Array<{ space: number; keyLength: number; value: string }>;
  /** the execute response body */
  response: string;
}

const [mode, file, arg] = process.argv.slice(2);
const app = uWS.App();

if (mode === 'static') {
  const body = readFileSync(file);
  app.get(arg ?? '/', (res) => {
    res.cork(() => res.writeHeader('Content-Type', 'application/json').end(body));
  });
  listen();
} else if (mode === 'durable') {
  const fixture = JSON.parse(readFileSync(file, 'utf8')) as DurableFixture;
  const db = new ClassicLevel<Buffer, string>(arg, { keyEncoding: 'buffer', valueEncoding: 'utf8' });
  await db.open();
  const response = Buffer.from(fixture.response);
  let seq = 0;
  type Waiting = { res: HttpResponse; aborted: boolean };
  let open: { batch: ReturnType<typeof db.batch>; waiting: Waiting[] } | undefined;
  let writing = false;
  let scheduled = false;
  const key = (space: number, length: number, n: number) => {
    const k = Buffer.alloc(length, 0x61);
    k[0] = space;
    k.writeUIntBE(n % 2 ** 48, length - 6, 6);
    return k;
  };
  const flush = () => {
    scheduled = false;
    const b = open;
    if (!b || writing) return;
    open = undefined;
    writing = true;
    void b.batch.write({ sync: true }).then(() => {
      writing = false;
      for (const w of b.waiting) if (!w.aborted) w.res.cork(() => w.res.writeHeader('Content-Type', 'application/json').end(response));
      if (open && !scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
  };
  const append = (w: Waiting) => {
    if (!open) open = { batch: db.batch(), waiting: [] };
    for (const op of fixture.writes) open.batch.put(key(op.space, op.keyLength, ++seq), op.value);
    open.waiting.push(w);
    if (!scheduled && !writing) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  app.post('/execute', (res) => {
    const w: Waiting = { res, aborted: false };
    res.onAborted(() => (w.aborted = true));
    const chunks: Buffer[] = [];
    res.onData((chunk, last) => {
      chunks.push(Buffer.from(chunk.slice(0)));
      if (last) {
        JSON.parse(Buffer.concat(chunks).toString('utf8'));
        append(w);
      }
    });
  });
  listen();
} else {
  console.error('usage: floor-server.ts static <body-file> <path> | durable <fixture-file> <data-dir>');
  process.exit(2);
}

function listen(): void {
  app.listen('127.0.0.1', 0, (socket) => {
    if (!socket) {
      console.error('floor cannot listen');
      process.exit(1);
    }
    console.log(`floor listening on ${uWS.us_socket_local_port(socket)}`);
  });
}
