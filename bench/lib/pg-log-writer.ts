// Child process of bench/pg-log.bench.ts: one node appending to the shared PostgreSQL log.
// Arguments: url, node id, mode (`paced`: one append every 5 ms, 400 of them; `load`: 32 concurrent
// appenders for 5 s). Prints one JSON line with what it did.
import { openPgLog } from '../../src/log/pg/pg-log.js';

const [url, id, mode] = process.argv.slice(2);
const log = await openPgLog(url, { scope: id });
let appends = 0;
if (mode === 'paced') {
  for (let i = 0; i < 400; i++) {
    await log.append(`exec:${id}`, [{ type: 'step.completed', data: { t: Date.now(), i } }]);
    appends++;
    await new Promise((r) => setTimeout(r, 5));
  }
} else {
  const end = Date.now() + 5000;
  await Promise.all(
    Array.from({ length: 32 }, async (_, w) => {
      let head = 0;
      while (Date.now() < end) {
        const r = await log.append(`exec:${id}-${w}`, [{ type: 'step.completed', data: { t: Date.now(), pad: 'x'.repeat(100) } }], { expectedStreamSeq: head });
        head = r.lastStreamSeq;
        appends++;
      }
    }),
  );
}
console.log(JSON.stringify({ id, appends, ...log.commitStats() }));
await log.close();
