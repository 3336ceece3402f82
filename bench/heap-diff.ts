/**
 * Compares two V8 heap snapshots of one process (`.heapsnapshot`, as the soak writes with
 * SOAK_HEAP_SNAPSHOTS=1) and prints (1) the node kinds whose count and self size grew the most, and
 * (2) the objects allocated after the first snapshot and still alive at the second, grouped by the class
 * and field that own them (the first named class up their retainer chain, e.g. `LevelLog.streams`).
 * A bounded cache shows up in (2) too while it churns; compare its total with the cache's bound, and look
 * for an owner whose share keeps growing from one pair of snapshots to the next.
 *
 *   npx tsx bench/heap-diff.ts before.heapsnapshot after.heapsnapshot [top=25]
 *   npx tsx bench/heap-diff.ts --owners one.heapsnapshot [top=25]   (every object of one snapshot, by owner)
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

interface Tally {
  count: number;
  bytes: number;
}

const STRING_TYPES = new Set(['string', 'concatenated string', 'sliced string']);
/** owners that say nothing: plain containers, V8 internals */
const ANONYMOUS = /^(object:Object|object:Array|object:Map|object:Set|array:.*|hidden:.*|\(strings\)|number:.*|object:system \/ .*|closure:.*|code:.*|object shape:.*|synthetic:.*|native:.*)$/;

class Heap {
  readonly width: number;
  readonly count: number;
  private readonly f: Record<string, number>;
  private readonly types: string[];

  constructor(readonly s: Snapshot) {
    const fields = s.snapshot.meta.node_fields;
    this.width = fields.length;
    this.count = s.nodes.length / this.width;
    this.f = Object.fromEntries(fields.map((name, i) => [name, i]));
    this.types = s.snapshot.meta.node_types[0];
  }

  field(k: number, name: string): number {
    return this.s.nodes[k * this.width + this.f[name]];
  }

  type(k: number): string {
    return this.types[this.field(k, 'type')];
  }

  label(k: number): string {
    const type = this.type(k);
    return STRING_TYPES.has(type) ? '(strings)' : `${type}:${String(this.s.strings[this.field(k, 'name')]).slice(0, 80)}`;
  }

  /** Each node's first strong retainer and the name of the edge from it. */
  retainers(): { by: Int32Array; edge: string[] } {
    const meta = this.s.snapshot.meta;
    const ef = meta.edge_fields;
    const ew = ef.length;
    const [typeAt, nameAt, toAt] = ['type', 'name_or_index', 'to_node'].map((n) => ef.indexOf(n));
    const edgeTypes = meta.edge_types[0];
    const by = new Int32Array(this.count).fill(-1);
    const edge: string[] = new Array(this.count);
    let e = 0;
    for (let k = 0; k < this.count; k++) {
      const n = this.field(k, 'edge_count');
      for (let j = 0; j < n; j++, e += ew) {
        const et = edgeTypes[this.s.edges[e + typeAt]];
        if (et === 'weak' || et === 'shortcut') continue;
        const to = this.s.edges[e + toAt] / this.width;
        if (by[to] !== -1 || to === k) continue;
        by[to] = k;
        edge[to] = et === 'element' || et === 'hidden' ? `[${et}]` : String(this.s.strings[this.s.edges[e + nameAt]]).slice(0, 40);
      }
    }
    return { by, edge };
  }
}

const load = (file: string) => new Heap(JSON.parse(readFileSync(file, 'utf8')) as Snapshot);

function tallyByLabel(h: Heap): Map<string, Tally> {
  const out = new Map<string, Tally>();
  for (let k = 0; k < h.count; k++) {
    const t = out.get(h.label(k)) ?? { count: 0, bytes: 0 };
    t.count++;
    t.bytes += h.field(k, 'self_size');
    out.set(h.label(k), t);
  }
  return out;
}

/** JS object ids are stable across snapshots of one process; native nodes use another range. */
function lastJsId(h: Heap): number {
  let max = 0;
  for (let k = 0; k < h.count; k++) if (['object', 'array', 'closure'].includes(h.type(k))) max = Math.max(max, h.field(k, 'id'));
  return max;
}

function newObjectsByOwner(after: Heap, sinceId: number): Map<string, Tally> {
  const { by, edge } = after.retainers();
  const out = new Map<string, Tally>();
  for (let k = 0; k < after.count; k++) {
    if (after.field(k, 'id') <= sinceId) continue;
    let owner = '(no named owner)';
    for (let cur = k, depth = 0; depth < 30 && by[cur] >= 0; depth++, cur = by[cur]) {
      const label = after.label(by[cur]);
      if (!ANONYMOUS.test(label)) {
        owner = `${label.replace(/^object:/, '')}.${edge[cur]}`;
        break;
      }
    }
    const t = out.get(owner) ?? { count: 0, bytes: 0 };
    t.count++;
    t.bytes += after.field(k, 'self_size');
    out.set(owner, t);
  }
  return out;
}

const line = (t: Tally, what: string, now?: number) => `${String(t.count).padStart(9)} objects ${(t.bytes / 1024).toFixed(0).padStart(9)} KiB${now === undefined ? '' : `  (now ${now})`}  ${what}`;

function main(): void {
  if (process.argv[2] === '--owners') {
    const owners = newObjectsByOwner(load(process.argv[3]), 0);
    for (const [owner, t] of [...owners].sort((x, y) => y[1].bytes - x[1].bytes).slice(0, Number(process.argv[4] ?? 25))) console.log(line(t, owner));
    return;
  }
  const [a, b, topArg] = process.argv.slice(2);
  if (!a || !b) {
    console.error('usage: tsx bench/heap-diff.ts before.heapsnapshot after.heapsnapshot [top]');
    process.exit(2);
  }
  const top = Number(topArg ?? 25);
  const before = load(a);
  const after = load(b);
  const tb = tallyByLabel(before);
  const ta = tallyByLabel(after);
  const sum = (m: Map<string, Tally>) => [...m.values()].reduce((s, t) => s + t.bytes, 0);
  console.log(`self size ${(sum(tb) / 2 ** 20).toFixed(1)} MiB → ${(sum(ta) / 2 ** 20).toFixed(1)} MiB`);
  const rows = [...ta].map(([key, t]) => {
    const p = tb.get(key) ?? { count: 0, bytes: 0 };
    return { key, d: { count: t.count - p.count, bytes: t.bytes - p.bytes }, now: t.count };
  });
  for (const by of ['bytes', 'count'] as const) {
    console.log(`\ngrowth by ${by === 'bytes' ? 'self size' : 'count'}:`);
    for (const r of rows.sort((x, y) => y.d[by] - x.d[by]).slice(0, top)) console.log(line(r.d, r.key, r.now));
  }
  console.log('\nallocated after the first snapshot and still alive, by owner:');
  const owners = newObjectsByOwner(after, lastJsId(before));
  for (const [owner, t] of [...owners].sort((x, y) => y[1].bytes - x[1].bytes).slice(0, top)) console.log(line(t, owner));
}

main();
