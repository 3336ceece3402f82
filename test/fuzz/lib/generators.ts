/**
 * fast-check generators of hostile HTTP requests for any route of the route table: path parameters
 * (known ids, odd text, percent-encoded garbage, over-long), query strings (the route's own parameter
 * names with wrong values, unknown names, repeats), headers (content types, cursors, tokens, oversized)
 * and bodies (a valid seed body mutated with wrong types and missing fields, any JSON, malformed text,
 * invalid UTF-8 bytes, duplicate keys, deep nesting, huge strings, bodies over the size limit, chunked).
 * A generated case is plain data, so fast-check can print and shrink it; `toRawRequest` renders it.
 */
import fc from 'fast-check';
import type { ZodType } from 'zod';
import type { RouteDef } from '../../../src/contract/routes.js';
import type { RawRequest } from '../../reliability/lib/raw-http.js';

/** What the test knows about the server's data, so some generated requests reach deep into handlers. */
export interface FuzzWorld {
  /** path parameter name → real values (ids of agents, workflows, executions, conversations, ...) */
  params: Record<string, string[]>;
  /** a valid body per `METHOD /path` (may depend on the path parameters) */
  seeds: Record<string, (params: Record<string, string>) => unknown>;
  /** Authorization header values to pick from (a valid token first) */
  authorizations: string[];
  /** a last look at a case before it is sent: keeps routes away from slow or host-changing work */
  guard?: (route: RouteDef, c: FuzzCase) => FuzzCase;
  /** the very last look, at the bytes about to be sent */
  guardRequest?: (route: RouteDef, req: RawRequest) => RawRequest;
}

type BodyCase =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; bytes: number[] }
  /** the seed with a string value replaced by raw bytes that are not UTF-8 */
  | { kind: 'invalid-utf8'; value: unknown; bytes: number[] }
  /** the seed with one key repeated with another value */
  | { kind: 'duplicate-key'; value: unknown; key: string; other: unknown }
  /** the seed with one value replaced by `depth` nested arrays or objects */
  | { kind: 'deep'; value: unknown; depth: number; shape: 'array' | 'object' }
  /** the seed with one value replaced by a string of `size` characters */
  | { kind: 'huge-string'; value: unknown; size: number; char: string }
  /** a JSON body just over the limit (413) */
  | { kind: 'oversized'; size: number };

export interface FuzzCase {
  params: Record<string, string>;
  /** how path parameters are written: percent-encoded, or as-is (only for values that are safe to put raw) */
  rawParams: boolean;
  query: Array<[string, string]>;
  headers: Array<[string, string]>;
  body: BodyCase;
  /** which value of the body raw text is spliced into (invalid bytes, deep nesting, huge strings) */
  at: number;
  chunked: boolean;
}

const MARK = '\u0000__FUZZ_MARK__\u0000';
const MARK_JSON = JSON.stringify(MARK);

/** Odd text: empty, unicode, control characters, lone surrogates, reserved words, numbers in disguise. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\udfff\ud800',
    '\u202e',
    '\ufeff',
    '\n',
    '\r\n',
    '\t',
    '..',
    '.',
    '/',
    '\\',
    '%',
    '%%',
    '%FF',
    '%00',
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    'null',
    'undefined',
    'true',
    'NaN',
    'Infinity',
    '-1',
    '0',
    '1e999',
    '9007199254740993',
    '-0',
    '0x10',
    '1.5',
    '[]',
    '{}',
    '{"a":1}',
    '<script>alert(1)</script>',
    "' OR 1=1 --",
    '${x}',
    '{{x}}',
    '*',
    '**',
  ),
);

/** Values of every JSON type, edge numbers included. */
export const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: oddString, weight: 3 },
  { arbitrary: fc.constantFrom(null, true, false, 0, -1, 1, 1.5, -0.5, 1e308, -1e308, 5e-324, 2 ** 53 + 2, -(2 ** 31), 2 ** 32), weight: 2 },
  { arbitrary: fc.integer(), weight: 1 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
  { arbitrary: fc.constantFrom([], {}, [null], [[]], { '': '' }, [1, 'a', null, {}]), weight: 2 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 2 },
);

const keyName: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'input',
    'options',
    'id',
    'userId',
    'conversationId',
    'messages',
    'content',
    'role',
    'schema',
    'stepId',
    'resumeData',
    'reason',
    'context',
    'metadata',
    'executionId',
    '__proto__',
    'constructor',
    '',
  ),
  fc.string({ maxLength: 8 }),
);

/** A mutation of a seed body: set a (possibly nested) value, delete a key, or add an unknown key. */
const mutation = fc.oneof(
  fc.record({ op: fc.constant('set' as const), at: fc.nat(), value: oddValue }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('add' as const), at: fc.nat(), key: keyName, value: oddValue }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

type Path = Array<string | number>;

/** Every container path and leaf path of a JSON value ([] = the root). */
function paths(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...prefix, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) paths(v, [...prefix, k], out);
  return out;
}

function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

function getAt(root: unknown, p: Path): unknown {
  let v: any = root;
  for (const k of p) v = v?.[k];
  return v;
}

/** Applies mutations to a copy of `seed`; the root itself may be replaced. */
function mutate(seed: unknown, muts: Mutation[]): unknown {
  let root: any = clone(seed);
  for (const m of muts) {
    const all = paths(root);
    const p = all[m.at % all.length];
    if (m.op === 'set') {
      if (p.length === 0) root = clone(m.value);
      else {
        const parent = getAt(root, p.slice(0, -1)) as any;
        parent[p[p.length - 1]] = clone(m.value);
      }
    } else if (m.op === 'delete') {
      if (p.length === 0) root = undefined;
      else {
        const parent = getAt(root, p.slice(0, -1)) as any;
        if (Array.isArray(parent)) parent.splice(Number(p[p.length - 1]), 1);
        else delete parent[p[p.length - 1]];
      }
    } else {
      const target = getAt(root, p) as any;
      if (target && typeof target === 'object' && !Array.isArray(target)) Object.defineProperty(target, m.key, { value: clone(m.value), enumerable: true, writable: true, configurable: true });
      else if (Array.isArray(target)) target.push(clone(m.value));
    }
  }
  return root;
}

/** Replaces one value of `value` (chosen by `at`) with the marker, so raw text can be spliced in after stringifying. */
function withMarker(value: unknown, at: number): unknown {
  const root: any = clone(value);
  if (!root || typeof root !== 'object') return MARK;
  const all = paths(root).filter((p) => p.length > 0);
  if (all.length === 0) return Array.isArray(root) ? [MARK] : { x: MARK };
  const p = all[at % all.length];
  const parent = getAt(root, p.slice(0, -1)) as any;
  parent[p[p.length - 1]] = MARK;
  return root;
}

/** The names a route's query schema declares (zod object shape), if it has one. */
function queryNames(schema: ZodType | undefined): string[] {
  const s = schema as unknown as { shape?: Record<string, unknown>; _zod?: { def?: { shape?: Record<string, unknown>; in?: unknown; innerType?: unknown } } } | undefined;
  const shape = s?.shape ?? s?._zod?.def?.shape;
  if (shape && typeof shape === 'object') return Object.keys(shape);
  const inner = (s?._zod?.def?.in ?? s?._zod?.def?.innerType) as ZodType | undefined;
  return inner && inner !== schema ? queryNames(inner) : [];
}

const COMMON_QUERY = [
  'limit',
  'offset',
  'page',
  'userId',
  'conversationId',
  'agentId',
  'fromSequence',
  'status',
  'from',
  'to',
  'since',
  'until',
  'metadata',
  'metadata.a',
  'level',
  'dev',
  'key',
  'token',
  'scope',
  'searchQuery',
  'roles',
  'before',
  'after',
];

const queryValue: fc.Arbitrary<string> = fc.oneof(
  oddString,
  fc.integer().map(String),
  fc.constantFrom('-1', '0', '1', '5', '500', '501', '100000', '1.5', 'abc', 'true', 'false', '2024-01-01T00:00:00.000Z', '2024-13-45', 'not-a-date', '{"a":1}', '{', '[1]', 'x'.repeat(3000)),
);

function queryArb(route: RouteDef): fc.Arbitrary<Array<[string, string]>> {
  const names = [...new Set([...queryNames(route.query), ...COMMON_QUERY])];
  const name = fc.oneof({ arbitrary: fc.constantFrom(...names), weight: 4 }, { arbitrary: oddString, weight: 1 });
  return fc.array(fc.tuple(name, queryValue), { maxLength: 5 });
}

const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 20 }).map((s) => s.replace(/[^\t\x20-\x7e]/g, '')),
  fc.constantFrom('', '0', '-1', '3', '99999999999999999999', 'abc', '\xff\xfe', 'caf\xe9', 'x'.repeat(2000)),
);

function headersArb(world: FuzzWorld): fc.Arbitrary<Array<[string, string]>> {
  const contentType = fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=xyz',
    'application/octet-stream',
    '',
    ';;;',
  );
  const one = fc.oneof(
    contentType.map((v) => ['content-type', v] as [string, string]),
    headerValue.map((v) => ['last-event-id', v] as [string, string]),
    fc.constantFrom(...world.authorizations, 'Bearer', 'Bearer x.y.z', 'Basic Zm9vOmJhcg==', 'bearer  ', 'Bearer ' + 'a'.repeat(3000)).map((v) => ['authorization', v] as [string, string]),
    fc.constantFrom('true', 'false', 'TRUE', '').map((v) => ['x-service-dev', v] as [string, string]),
    headerValue.map((v) => ['x-console-access-key', v] as [string, string]),
    headerValue.map((v) => ['x-forwarded-host', v] as [string, string]),
    fc.constantFrom('http', 'https', 'javascript', '').map((v) => ['x-forwarded-proto', v] as [string, string]),
    fc.constantFrom('http://evil.example', 'null', '*', '').map((v) => ['origin', v] as [string, string]),
    fc.constantFrom('text/event-stream', 'application/json', '*/*', 'text/html').map((v) => ['accept', v] as [string, string]),
    fc.constantFrom('gzip', 'br', 'identity', 'deflate').map((v) => ['content-encoding', v] as [string, string]),
    fc.tuple(fc.stringMatching(/^x-[a-z0-9-]{1,12}$/), headerValue),
    // past the 16 KiB header limit: 431
    fc.constant(['x-padding', 'p'.repeat(20_000)] as [string, string]),
  );
  return fc.array(one, { maxLength: 4 }).map((hs) => {
    // the valid token most of the time, so requests get past auth and reach the handlers
    const out = hs.filter(([k], i) => hs.findIndex(([k2]) => k2 === k) === i);
    if (!out.some(([k]) => k === 'authorization')) out.unshift(['authorization', world.authorizations[0]]);
    // and the console credentials, so /observability/* is fuzzed past its guard as well
    if (!out.some(([k]) => k === 'x-service-dev' || k === 'x-console-access-key')) out.unshift(['x-service-dev', 'true']);
    // and a JSON content type, so bodies reach the parser and the handlers (other types are a 415, fuzzed above)
    if (!out.some(([k]) => k === 'content-type')) out.unshift(['content-type', 'application/json']);
    return out;
  });
}

function bodyArb(seed: unknown): fc.Arbitrary<BodyCase> {
  const base = seed === undefined ? {} : seed;
  const mutated = fc.array(mutation, { maxLength: 3 }).map((ms) => mutate(base, ms));
  return fc.oneof(
    { arbitrary: mutated.map((value): BodyCase => ({ kind: 'json', value })), weight: 8 },
    { arbitrary: fc.constant<BodyCase>({ kind: 'json', value: base }), weight: 2 },
    { arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value): BodyCase => ({ kind: 'json', value })), weight: 2 },
    { arbitrary: fc.constant<BodyCase>({ kind: 'none' }), weight: 1 },
    {
      arbitrary: fc
        .oneof(fc.string({ maxLength: 40 }), fc.constantFrom('{', '{"a":', '[1,2', '{"a":1}}', 'nul', '\ufeff{}', '{"a":1,}', "{'a':1}", '{"a":NaN}', '  ', '\u0000'))
        .map((text): BodyCase => ({ kind: 'text', text })),
      weight: 2,
    },
    { arbitrary: fc.uint8Array({ maxLength: 64 }).map((b): BodyCase => ({ kind: 'bytes', bytes: [...b] })), weight: 1 },
    {
      arbitrary: fc
        .tuple(mutated, fc.constantFrom([0xff], [0xfe, 0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80], [0xc0, 0xaf]))
        .map(([value, bytes]): BodyCase => ({ kind: 'invalid-utf8', value, bytes: [...bytes] })),
      weight: 2,
    },
    {
      arbitrary: fc.tuple(mutated, keyName, oddValue).map(([value, key, other]): BodyCase => {
        const keys = value && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : [];
        return { kind: 'duplicate-key', value, key: keys.length ? keys[key.length % keys.length] : key, other };
      }),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(mutated, fc.constantFrom(64, 250, 257, 1_000, 20_000, 200_000, 400_000), fc.constantFrom('array' as const, 'object' as const))
        .map(([value, depth, shape]): BodyCase => ({ kind: 'deep', value, depth, shape })),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(mutated, fc.constantFrom(10_000, 100_000, 600_000, 1_000_000), fc.constantFrom('a', 'é', '\u{1F600}', '\\', '"'))
        .map(([value, size, char]): BodyCase => ({ kind: 'huge-string', value, size, char })),
      weight: 1,
    },
    { arbitrary: fc.integer({ min: 1024 * 1024 + 1, max: 1024 * 1024 + 4096 }).map((size): BodyCase => ({ kind: 'oversized', size })), weight: 1 },
  );
}

/** Splits `{...}` text at the marker and splices raw bytes in. */
function splice(value: unknown, at: number, insert: Buffer): Buffer {
  const text = JSON.stringify(withMarker(value, at)) ?? 'null';
  const i = text.indexOf(MARK_JSON);
  if (i < 0) return Buffer.concat([Buffer.from(text), insert]);
  return Buffer.concat([Buffer.from(text.slice(0, i)), insert, Buffer.from(text.slice(i + MARK_JSON.length))]);
}

/** The body bytes of a case (undefined = no body at all). */
function bodyBytes(b: BodyCase, at = 0): Buffer | undefined {
  switch (b.kind) {
    case 'none':
      return undefined;
    case 'json':
      return b.value === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(b.value));
    case 'text':
      return Buffer.from(b.text);
    case 'bytes':
      return Buffer.from(b.bytes);
    case 'invalid-utf8':
      return splice(b.value, at, Buffer.concat([Buffer.from('"x'), Buffer.from(b.bytes), Buffer.from('y"')]));
    case 'duplicate-key': {
      const text = JSON.stringify(b.value ?? {});
      const dup = `${JSON.stringify(b.key)}:${JSON.stringify(b.other ?? null)}`;
      if (!text.startsWith('{')) return Buffer.from(`{${dup},${dup}}`);
      return Buffer.from(text === '{}' ? `{${dup},${dup}}` : `{${dup},${text.slice(1, -1)},${dup}}`);
    }
    case 'deep': {
      const open = b.shape === 'array' ? '[' : '{"a":';
      const close = b.shape === 'array' ? ']' : '}';
      return splice(b.value, at, Buffer.from(open.repeat(b.depth) + '1' + close.repeat(b.depth)));
    }
    case 'huge-string':
      return splice(b.value, at, Buffer.from(JSON.stringify(b.char.repeat(b.size))));
    case 'oversized': {
      // `{"pad":"` + pad + `"}`: exactly `size` bytes
      const pad = Math.max(0, b.size - 10);
      return Buffer.from(`{"pad":"${'z'.repeat(pad)}"}`);
    }
  }
}

const PARAM_SAFE = /^[A-Za-z0-9._~-]*$/;

/** Percent-encodes the UTF-8 bytes of `s` (lone surrogates become U+FFFD, where encodeURIComponent throws). */
export function pct(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8'))
    out +=
      (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x2d || b === 0x2e || b === 0x5f || b === 0x7e
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

export function caseArb(route: RouteDef, world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const names = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
  const paramArb = (name: string) => {
    const known = world.params[name] ?? [];
    const odd = fc.oneof(oddString, fc.constantFrom('x'.repeat(300), 'y'.repeat(9_000)));
    return known.length ? fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 3 }, { arbitrary: odd, weight: 2 }) : odd;
  };
  const params = fc.record(Object.fromEntries(names.map((n) => [n, paramArb(n)]))) as fc.Arbitrary<Record<string, string>>;
  const seedFor = world.seeds[`${route.method} ${route.path}`];
  return params.chain((p) =>
    fc.record({
      params: fc.constant(p),
      rawParams: fc.boolean(),
      query: queryArb(route),
      headers: headersArb(world),
      body:
        route.method === 'GET' || route.method === 'DELETE'
          ? fc.oneof({ arbitrary: fc.constant<BodyCase>({ kind: 'none' }), weight: 6 }, { arbitrary: bodyArb({}), weight: 1 })
          : bodyArb(seedFor ? seedFor(p) : {}),
      at: fc.nat(),
      chunked: fc.oneof({ arbitrary: fc.constant(false), weight: 4 }, { arbitrary: fc.constant(true), weight: 1 }),
    }),
  );
}

/** Renders a case as a raw request on `route`. */
export function toRawRequest(route: RouteDef, c: FuzzCase): RawRequest {
  const path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    const v = c.params[name] ?? '';
    // an empty segment would not match the route at all; keep it so the 404 path is fuzzed too
    return c.rawParams && PARAM_SAFE.test(v) ? v : pct(v);
  });
  const qs = c.query.map(([k, v]) => `${pct(k)}=${/^%[0-9A-F]{2}/i.test(v) || v === '%' ? v : pct(v)}`).join('&');
  const headers: Record<string, string> = {};
  for (const [k, v] of c.headers) headers[k] = v;
  const body = bodyBytes(c.body, c.at);
  return { method: route.method, path: qs ? `${path}?${qs}` : path, headers, body, chunked: c.chunked && body !== undefined && body.length > 0 };
}

/** A short description of a case for failure messages (bodies cut). */
export function describeCase(req: RawRequest): string {
  const body = req.body === undefined ? '(none)' : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
  const preview = typeof body === 'string' ? body : body.length > 300 ? `${body.subarray(0, 300).toString('utf8')}… (${body.length} bytes)` : body.toString('utf8');
  const hs = Object.entries(req.headers ?? {}).map(([k, v]) => `${k}: ${String(v).length > 80 ? `${String(v).slice(0, 80)}… (${String(v).length})` : v}`);
  return `${req.method} ${req.path.length > 300 ? `${req.path.slice(0, 300)}…` : req.path}${req.chunked ? ' [chunked]' : ''}\n  headers: ${hs.join(' | ')}\n  body: ${preview}`;
}

/** Path parameter values that have broken servers before: inherited property names, bytes that are not UTF-8, traversal, NUL, too long. */
const HOSTILE_PARAMS = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '%FF%FE', '..', '\u0000', ' ', 'x'.repeat(9_000)];
const HOSTILE_QUERY_VALUES = ['abc', '-1', '%FF', '{"__proto__":{"polluted":1}}', ''];
const HOSTILE_LEAVES: unknown[] = [null, [], { __hostile: true }];

/**
 * A fixed sweep of known-hostile requests for one route (the random fuzzer finds these only by luck):
 * each path parameter set to each hostile value, each declared query parameter set to each hostile value,
 * and (for body routes) the seed with every value in turn replaced by null, [] or an object, deleted, or
 * nested past the limit, plus invalid UTF-8, duplicate and `__proto__` keys, a huge string and an oversized body.
 */
export function hostileCases(route: RouteDef, world: FuzzWorld): FuzzCase[] {
  const names = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
  const base: Record<string, string> = Object.fromEntries(names.map((n) => [n, world.params[n]?.[0] ?? 'x']));
  const auth: Array<[string, string]> = [
    ['authorization', world.authorizations[0]],
    ['x-service-dev', 'true'],
    ['content-type', 'application/json'],
  ];
  const c = (over: Partial<FuzzCase>): FuzzCase => ({ params: base, rawParams: false, query: [], headers: auth, body: { kind: 'none' }, at: 0, chunked: false, ...over });
  const out: FuzzCase[] = [];
  for (const n of names) for (const v of HOSTILE_PARAMS) out.push(c({ params: { ...base, [n]: v }, rawParams: v === '%FF%FE' }));
  for (const q of queryNames(route.query)) for (const v of HOSTILE_QUERY_VALUES) out.push(c({ query: [[q, v]] }));
  if (route.method === 'GET' || route.method === 'DELETE') return out;
  const seed = world.seeds[`${route.method} ${route.path}`]?.(base) ?? {};
  const all = paths(seed);
  for (let i = 0; i < all.length; i++) {
    for (const leaf of HOSTILE_LEAVES) out.push(c({ body: { kind: 'json', value: mutate(seed, [{ op: 'set', at: i, value: leaf }]) } }));
    if (i > 0) out.push(c({ body: { kind: 'json', value: mutate(seed, [{ op: 'delete', at: i }]) } }));
    if (i > 0) out.push(c({ body: { kind: 'deep', value: seed, depth: 300, shape: i % 2 ? 'array' : 'object' }, at: i - 1 }));
    const target = getAt(seed, all[i]);
    if (target && typeof target === 'object' && !Array.isArray(target)) out.push(c({ body: { kind: 'json', value: mutate(seed, [{ op: 'add', at: i, key: '__proto__', value: { polluted: 1 } }]) } }));
  }
  out.push(
    c({ body: { kind: 'invalid-utf8', value: seed, bytes: [0xff, 0xfe, 0xc3, 0x28] } }),
    c({ body: { kind: 'duplicate-key', value: seed, key: Object.keys(seed ?? {})[0] ?? 'a', other: 1 } }),
    c({ body: { kind: 'huge-string', value: seed, size: 900_000, char: 'a' } }),
    c({ body: { kind: 'oversized', size: 1024 * 1024 + 1 } }),
    c({ body: { kind: 'oversized', size: 1024 * 1024 + 1 }, chunked: true }),
    c({ body: { kind: 'text', text: '{"a":' } }),
    c({ body: { kind: 'json', value: [seed] } }),
    c({ body: { kind: 'json', value: seed }, headers: [...auth.slice(0, 2), ['content-type', 'text/plain']] }),
  );
  return out;
}
