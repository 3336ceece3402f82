/**
 * Report of `npm run bench:peers`: folds the runs into one row per scenario × connections and
 * server (mean over alternations), computes the eventloom ÷ VoltAgent ratios against the targets,
 * prints the tables, writes bench/results/<date>.json and <date>.svg (a Vega-Lite chart rendered
 * to SVG by Vega in Node), and replaces the generated section of bench/README.md.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { MachineInfo } from './machine-info.js';
import type { PeerVersions } from './peer-install.js';
import type { LoadResult } from './peer-load.js';
import type { Scenario } from './peer-scenarios.js';
import { SERVER_IDS, SERVER_LABEL, type ServerId } from './peer-servers.js';

export interface BenchConfig {
  durationS: number;
  rounds: number;
  warmupS: number;
  connections: number[];
  executions: number;
  startupRuns: number;
  idleSettleMs: number;
  /** load generator of the timed runs */
  client: string;
  /** load generator of the runs of an exact number of executions */
  countedClient: string;
}

interface TimedRun {
  round: number;
  connections: number;
  result: LoadResult;
  /** server CPU (user + system) per answered request, µs */
  cpuUsPerReq: number;
  /** server RSS right after the run, MiB */
  rssMiB: number;
}

/** Per scenario and server: the timed runs, or why the server could not serve it. */
export interface ScenarioRecord {
  scenario: Scenario;
  runs: Record<ServerId, TimedRun[]>;
  unsupported: Partial<Record<ServerId, string>>;
}

export interface StartupRun {
  server: ServerId;
  firstAnswerMs: number;
  idleRssMiB: number;
}

export interface MemoryRun {
  server: ServerId;
  executions: number;
  idleRssMiB: number;
  rssAfterMiB: number;
  result: LoadResult;
  error?: string;
}

export interface RawResults {
  machine: MachineInfo;
  config: BenchConfig;
  versions: PeerVersions;
  scenarios: ScenarioRecord[];
  startup: StartupRun[];
  startupErrors: string[];
  memory: MemoryRun[];
  refusedConnections: Record<ServerId, string[]>;
  elapsedS: number;
  /** 1, 5 and 15 min load averages when the run ended (machine.loadAverage: when it started) */
  loadAverageEnd: number[];
  /** the floors measured in the same run (bench/lib/floors.ts): per scenario id and connection count */
  floors?: FloorRecord[];
}

export interface FloorRecord {
  scenarioId: string;
  connections: number;
  /** what the floor is */
  floor: string;
  /** per alternation: the floor's figure (req/s, or µs of CPU per call for generateText) */
  values: number[];
  unit: 'req/s' | 'µs CPU/call';
}

interface Side {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerReq: number;
  rssMiB: number;
  bad: number;
  runs: number;
}

interface Row {
  scenario: string;
  label: string;
  connections: number;
  eventloom?: Side;
  voltagent?: Side;
  unsupported: Partial<Record<ServerId, string>>;
  /** eventloom req/s ÷ VoltAgent req/s */
  ratio?: number;
  /** at 10 connections only */
  targetRatio?: number;
  met?: boolean;
}

interface Measure {
  id: 'startup' | 'idle-rss' | 'rss-after-executions';
  label: string;
  unit: string;
  eventloom?: number;
  voltagent?: number;
  /** eventloom ÷ VoltAgent */
  ratio?: number;
  /** the ratio must be at most this */
  targetMaxRatio: number;
  met?: boolean;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function side(runs: TimedRun[]): Side | undefined {
  if (runs.length === 0) return undefined;
  const responses = runs.reduce((a, r) => a + r.result.responses, 0);
  return {
    reqPerSec: mean(runs.map((r) => r.result.reqPerSec)),
    p50Ms: mean(runs.map((r) => r.result.latencyMs.p50)),
    p99Ms: mean(runs.map((r) => r.result.latencyMs.p99)),
    cpuUsPerReq: runs.reduce((a, r) => a + r.cpuUsPerReq * r.result.responses, 0) / Math.max(1, responses),
    rssMiB: Math.max(...runs.map((r) => r.rssMiB)),
    bad: runs.reduce((a, r) => a + r.result.bad + r.result.errors + r.result.timeouts, 0),
    runs: runs.length,
  };
}

function rows(raw: RawResults): Row[] {
  const out: Row[] = [];
  for (const rec of raw.scenarios) {
    for (const c of raw.config.connections) {
      const el = side(rec.runs.eventloom.filter((r) => r.connections === c));
      const va = side(rec.runs.voltagent.filter((r) => r.connections === c));
      const ratio = el && va && va.reqPerSec > 0 ? el.reqPerSec / va.reqPerSec : undefined;
      const targeted = c === 10;
      out.push({
        scenario: rec.scenario.id,
        label: rec.scenario.label,
        connections: c,
        ...(el ? { eventloom: el } : {}),
        ...(va ? { voltagent: va } : {}),
        unsupported: rec.unsupported,
        ...(ratio !== undefined ? { ratio } : {}),
        ...(targeted ? { targetRatio: rec.scenario.targetRatio } : {}),
        ...(targeted && ratio !== undefined ? { met: ratio >= rec.scenario.targetRatio } : {}),
      });
    }
  }
  return out;
}

function measures(raw: RawResults): Measure[] {
  const pick = (server: ServerId, f: (r: StartupRun) => number) => {
    const xs = raw.startup.filter((r) => r.server === server).map(f);
    return xs.length > 0 ? median(xs) : undefined;
  };
  const mem = (server: ServerId) => raw.memory.find((m) => m.server === server && m.error === undefined)?.rssAfterMiB;
  const make = (id: Measure['id'], label: string, unit: string, el: number | undefined, va: number | undefined, targetMaxRatio: number): Measure => {
    const ratio = el !== undefined && va !== undefined && va > 0 ? el / va : undefined;
    return {
      id,
      label,
      unit,
      ...(el !== undefined ? { eventloom: el } : {}),
      ...(va !== undefined ? { voltagent: va } : {}),
      ...(ratio !== undefined ? { ratio, met: ratio <= targetMaxRatio } : {}),
      targetMaxRatio,
    };
  };
  return [
    make(
      'startup',
      'start-up: spawn → first 200 on GET /agents',
      'ms',
      pick('eventloom', (r) => r.firstAnswerMs),
      pick('voltagent', (r) => r.firstAnswerMs),
      1 / 3,
    ),
    make(
      'idle-rss',
      `idle RSS (${raw.config.idleSettleMs / 1000} s after the first answer)`,
      'MiB',
      pick('eventloom', (r) => r.idleRssMiB),
      pick('voltagent', (r) => r.idleRssMiB),
      1 / 2,
    ),
    make('rss-after-executions', `RSS after ${raw.config.executions.toLocaleString('en-US')} executions of echo`, 'MiB', mem('eventloom'), mem('voltagent'), 1 / 4),
  ];
}

const f0 = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '–' : Math.round(n).toLocaleString('en-US'));
const f1 = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '–' : n.toFixed(1));
const f2 = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '–' : n < 10 ? n.toFixed(2) : n.toFixed(1));
const fx = (n: number | undefined) => (n === undefined ? '–' : `${n.toFixed(2)}×`);
const fraction = (x: number) => (x === 1 / 3 ? '1/3' : x === 1 / 2 ? '1/2' : x === 1 / 4 ? '1/4' : x.toFixed(2));
const verdict = (met: boolean | undefined) => (met === undefined ? '' : met ? 'met' : 'not met');

function cell(row: Row, server: ServerId, f: (s: Side) => string): string {
  const s = row[server];
  if (s) return f(s) + (s.bad > 0 ? ` (${s.bad} bad)` : '');
  const why = row.unsupported[server];
  return why ? 'cannot serve' : '–';
}

/** Markdown tables (also printed to the console). */
export function markdownTables(raw: RawResults): string {
  const lines: string[] = [];
  lines.push(
    '| request | conns | eventloom req/s | VoltAgent req/s | ratio | target | eventloom p50 / p99 ms | VoltAgent p50 / p99 ms | eventloom CPU µs/req | VoltAgent CPU µs/req | eventloom RSS MiB | VoltAgent RSS MiB |',
  );
  lines.push('|---|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|');
  for (const r of rows(raw)) {
    const target = r.targetRatio === undefined ? '' : `≥ ${r.targetRatio}× (${verdict(r.met) || 'n/a'})`;
    lines.push(
      `| ${r.label} | ${r.connections} | ${cell(r, 'eventloom', (s) => f0(s.reqPerSec))} | ${cell(r, 'voltagent', (s) => f0(s.reqPerSec))} | ${fx(r.ratio)} | ${target} | ` +
        `${cell(r, 'eventloom', (s) => `${f2(s.p50Ms)} / ${f2(s.p99Ms)}`)} | ${cell(r, 'voltagent', (s) => `${f2(s.p50Ms)} / ${f2(s.p99Ms)}`)} | ` +
        `${cell(r, 'eventloom', (s) => f0(s.cpuUsPerReq))} | ${cell(r, 'voltagent', (s) => f0(s.cpuUsPerReq))} | ${cell(r, 'eventloom', (s) => f1(s.rssMiB))} | ${cell(r, 'voltagent', (s) => f1(s.rssMiB))} |`,
    );
  }
  lines.push('');
  lines.push('| measure | eventloom | VoltAgent | ratio | target |');
  lines.push('|---|--:|--:|--:|---|');
  for (const m of measures(raw)) {
    const fmt = m.unit === 'ms' ? f0 : f1;
    lines.push(`| ${m.label} | ${fmt(m.eventloom)} ${m.unit} | ${fmt(m.voltagent)} ${m.unit} | ${fx(m.ratio)} | ≤ ${fraction(m.targetMaxRatio)} (${verdict(m.met) || 'n/a'}) |`);
  }
  if (raw.floors && raw.floors.length > 0) {
    lines.push('');
    lines.push('| request | conns | floor (same run) | floor | eventloom | eventloom ÷ floor |');
    lines.push('|---|--:|---|--:|--:|--:|');
    for (const f of raw.floors) {
      const rec = raw.scenarios.find((s) => s.scenario.id === f.scenarioId);
      const runs = rec?.runs.eventloom.filter((r) => r.connections === f.connections) ?? [];
      const floor = f.values.reduce((a, b) => a + b, 0) / Math.max(1, f.values.length);
      const cpu = f.unit === 'µs CPU/call';
      const ours = runs.reduce((a, r) => a + (cpu ? r.cpuUsPerReq : r.result.reqPerSec), 0) / Math.max(1, runs.length);
      lines.push(`| ${rec?.scenario.label ?? f.scenarioId} | ${f.connections} | ${f.floor} | ${f0(floor)} ${f.unit} | ${f0(ours)} ${f.unit} | ${runs.length ? fx(ours / floor) : 'n/a'} |`);
    }
  }
  const unsupported = raw.scenarios.flatMap((s) => SERVER_IDS.flatMap((id) => (s.unsupported[id] ? [`- ${SERVER_LABEL[id]} cannot serve ${s.scenario.label}: ${s.unsupported[id]}`] : [])));
  const memErrors = raw.memory.filter((m) => m.error).map((m) => `- ${SERVER_LABEL[m.server]}: RSS after executions not measured: ${m.error}`);
  const startErrors = raw.startupErrors.map((e) => `- start-up: ${e}`);
  const problems = [...unsupported, ...memErrors, ...startErrors];
  if (problems.length > 0) lines.push('', ...problems);
  return lines.join('\n');
}

function summaryJson(raw: RawResults): unknown {
  return {
    benchmark: 'peers',
    description: 'eventloom vs VoltAgent serving the same fixture (examples/), alternated runs on one machine; eventloom fsyncs every write (LevelDB), VoltAgent keeps everything in memory',
    machine: raw.machine,
    config: raw.config,
    versions: raw.versions,
    elapsedS: Math.round(raw.elapsedS),
    loadAverageEnd: raw.loadAverageEnd,
    rows: rows(raw),
    measures: measures(raw),
    refusedOutboundConnections: raw.refusedConnections,
    raw: {
      scenarios: raw.scenarios.map((s) => ({ id: s.scenario.id, runs: s.runs, unsupported: s.unsupported })),
      startup: raw.startup,
      startupErrors: raw.startupErrors,
      memory: raw.memory,
    },
  };
}

/* ---------- chart (Vega-Lite → Vega → SVG, in Node) ---------- */

interface VegaModule {
  parse(spec: unknown): unknown;
  View: new (runtime: unknown, opts: { renderer: 'none' }) => { toSVG(): Promise<string>; finalize(): void };
}
interface VegaLiteModule {
  compile(spec: unknown): { spec: unknown };
}

async function importFromPeers<T>(peersDir: string, pkg: string): Promise<T> {
  const resolved = createRequire(path.join(peersDir, 'package.json')).resolve(pkg);
  return (await import(pathToFileURL(resolved).href)) as T;
}

async function chartSvg(raw: RawResults, peersDir: string): Promise<string> {
  const vega = await importFromPeers<VegaModule>(peersDir, 'vega');
  const vl = await importFromPeers<VegaLiteModule>(peersDir, 'vega-lite');
  const requests = raw.scenarios.map((s) => s.scenario.chartLabel);
  const chartLabel = new Map(raw.scenarios.map((s) => [s.scenario.id, s.scenario.chartLabel]));
  const throughput = rows(raw).flatMap((r) =>
    SERVER_IDS.flatMap((id) => {
      const s = r[id];
      return s ? [{ request: chartLabel.get(r.scenario), connections: `×${r.connections}`, server: SERVER_LABEL[id], reqPerSec: Math.round(s.reqPerSec) }] : [];
    }),
  );
  const measureTitle = (m: Measure) =>
    `${m.id === 'startup' ? 'start-up to first 200' : m.id === 'idle-rss' ? 'idle RSS' : `RSS after ${raw.config.executions.toLocaleString('en-US')} executions`} (${m.unit})`;
  const allMeasures = measures(raw);
  const resources = allMeasures.flatMap((m) =>
    SERVER_IDS.flatMap((id) => {
      const v = m[id];
      return v === undefined ? [] : [{ measure: measureTitle(m), server: SERVER_LABEL[id], value: Math.round(v * 10) / 10 }];
    }),
  );
  const servers = SERVER_IDS.map((id) => SERVER_LABEL[id]);
  const color = { field: 'server', type: 'nominal', title: null, sort: servers, scale: { domain: servers, range: ['#2f6fdb', '#e0813a'] } };
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: 'eventloom vs VoltAgent: same fixture, same machine, alternated runs',
      subtitle: `${raw.machine.cpu} × ${raw.machine.cores} cores, node ${raw.machine.node}, ${raw.machine.date.slice(0, 10)}; machine shared with other work, figures are noisy`,
    },
    config: { font: 'sans-serif', view: { stroke: null }, header: { labelFontSize: 11, labelLimit: 0 } },
    vconcat: [
      {
        title: 'Throughput: correct responses per second by client connections (higher is better)',
        data: { values: throughput },
        facet: { column: { field: 'request', type: 'nominal', title: null, sort: requests } },
        spec: {
          width: 140,
          height: 180,
          mark: { type: 'bar', tooltip: true },
          encoding: {
            x: { field: 'connections', type: 'nominal', title: null, sort: raw.config.connections.map((c) => `×${c}`), axis: { labelAngle: 0 } },
            xOffset: { field: 'server', type: 'nominal', sort: servers },
            y: { field: 'reqPerSec', type: 'quantitative', title: 'req/s' },
            color,
          },
        },
        resolve: { scale: { y: 'independent' } },
      },
      {
        title: 'Start-up and memory (lower is better)',
        data: { values: resources },
        facet: { column: { field: 'measure', type: 'nominal', title: null, sort: allMeasures.map(measureTitle) } },
        spec: {
          width: 190,
          height: 150,
          mark: { type: 'bar', tooltip: true },
          encoding: {
            x: { field: 'server', type: 'nominal', title: null, sort: servers, axis: { labelAngle: 0 } },
            y: { field: 'value', type: 'quantitative', title: null },
            color,
          },
        },
        resolve: { scale: { y: 'independent' } },
      },
    ],
  };
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/* ---------- files ---------- */

const BEGIN = '<!-- bench:peers:begin (generated by npm run bench:peers) -->';
const END = '<!-- bench:peers:end -->';

function readmeSection(raw: RawResults, date: string): string {
  const m = raw.machine;
  const c = raw.config;
  return [
    BEGIN,
    `Latest run: ${m.date.slice(0, 16).replace('T', ' ')} UTC, ${m.cpu} × ${m.cores} cores, ${m.memoryGiB} GiB, node ${m.node} on ${m.platform}; load average ${m.loadAverage.join(' ')} at the start and ${raw.loadAverageEnd.join(' ')} at the end. ` +
      `The machine was shared with other work, so absolute figures are noisy; the servers were alternated (A B A B) so drift hits both. ` +
      `@voltagent/core ${raw.versions['@voltagent/core']}, @voltagent/server-hono ${raw.versions['@voltagent/server-hono']}, ai ${raw.versions.ai}. ` +
      `${c.rounds} × ${c.durationS} s per server, scenario and connection count (after ${c.warmupS} s warm-up), load by ${c.client}; ${c.startupRuns} start-ups each; ${c.executions.toLocaleString('en-US')} executions for the memory figure (${c.countedClient}); total ${Math.round(raw.elapsedS)} s. ` +
      `Raw figures: [results/${date}.json](results/${date}.json).`,
    '',
    markdownTables(raw),
    '',
    `![eventloom vs VoltAgent](results/${date}.svg)`,
    END,
  ].join('\n');
}

export interface WrittenFiles {
  json: string;
  svg?: string;
  readme?: string;
  chartError?: string;
}

export async function writeReport(raw: RawResults, opts: { resultsDir: string; readme?: string; peersDir: string }): Promise<WrittenFiles> {
  const date = raw.machine.date.slice(0, 10);
  mkdirSync(opts.resultsDir, { recursive: true });
  const json = path.join(opts.resultsDir, `${date}.json`);
  writeFileSync(json, `${JSON.stringify(summaryJson(raw), null, 2)}\n`);
  const out: WrittenFiles = { json };
  try {
    const svg = path.join(opts.resultsDir, `${date}.svg`);
    writeFileSync(svg, await chartSvg(raw, opts.peersDir));
    out.svg = svg;
  } catch (err) {
    out.chartError = (err as Error).message;
  }
  if (opts.readme && existsSync(opts.readme)) {
    const text = readFileSync(opts.readme, 'utf8');
    const a = text.indexOf(BEGIN);
    const b = text.indexOf(END);
    if (a >= 0 && b > a) {
      writeFileSync(opts.readme, text.slice(0, a) + readmeSection(raw, date) + text.slice(b + END.length));
      out.readme = opts.readme;
    }
  }
  return out;
}
