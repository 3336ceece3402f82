/**
 * The checks the crash-chaos test runs after each restart, against the ledger of what the clients were
 * told: recovery settles (no execution left `running`); every acknowledged execution is listed exactly
 * once with the state it was acknowledged in (or a later one its own recovery explains); every
 * acknowledged memory message is listed exactly once; no agent run is left `working`; every SSE reader
 * cut by the kill resumes with `Last-Event-ID` and receives every remaining record exactly once, in
 * order, matching the log; suspended executions still resume. Returns the problems found (empty = ok).
 */
import { readSse } from '../../helpers/sse.js';
import type { ExecEntry, Ledger, ReaderLog } from './chaos-load.js';

interface ExecRecord {
  id: string;
  workflowId: string;
  status: string;
  output?: unknown;
  lastSequence: number;
  events: Array<{ sequence: number; type: string; from: string }>;
}

async function getJson(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Waits until no execution is `running` (recovery re-runs interrupted steps), bounded. */
async function settle(url: string, timeoutMs = 30_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const r = await getJson(`${url}/workflows/executions?status=running&limit=1`);
    if (r.status === 200 && r.body.total === 0) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`executions still running ${timeoutMs} ms after the restart: ${JSON.stringify(r.body).slice(0, 500)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function listExecutions(url: string): Promise<{ records: Map<string, ExecRecord>; duplicates: string[] }> {
  const records = new Map<string, ExecRecord>();
  const duplicates: string[] = [];
  for (let offset = 0; offset < 100_000; offset += 500) {
    const r = await getJson(`${url}/workflows/executions?limit=500&offset=${offset}&include=events`);
    if (r.status !== 200) throw new Error(`executions list answered ${r.status}`);
    for (const rec of r.body.data as ExecRecord[]) {
      if (records.has(rec.id)) duplicates.push(rec.id);
      records.set(rec.id, rec);
    }
    if (offset + 500 >= r.body.total) break;
  }
  return { records, duplicates };
}

function checkExecution(e: ExecEntry, rec: ExecRecord | undefined, problems: string[]): void {
  if (!rec) {
    if (e.acked || e.streamed || e.resumeAcked) problems.push(`acknowledged execution ${e.id} is missing`);
    return;
  }
  const echoText = e.workflow === 'echo' ? (e.input as { text: string }).text : undefined;
  if (rec.status !== 'completed' && rec.status !== 'suspended') problems.push(`execution ${e.id} is ${rec.status} after recovery`);
  if (e.workflow === 'echo') {
    if (rec.status !== 'completed') problems.push(`echo ${e.id} is ${rec.status}, not completed`);
    else if (JSON.stringify(rec.output) !== JSON.stringify({ text: echoText })) problems.push(`echo ${e.id} output ${JSON.stringify(rec.output)}`);
  } else if (e.resumeAcked) {
    if (rec.status !== e.resumeAcked.status) problems.push(`order ${e.id} resume was acknowledged as ${e.resumeAcked.status}, now ${rec.status}`);
  } else if (e.acked?.status === 'suspended' && !e.resumeTried && rec.status !== 'suspended') {
    problems.push(`order ${e.id} was acknowledged suspended and never resumed, now ${rec.status}`);
  }
  if (e.acked?.status === 'completed' && rec.status !== 'completed') problems.push(`execution ${e.id} was acknowledged completed, now ${rec.status}`);
  const seqs = rec.events.map((x) => x.sequence);
  if (seqs.some((s, i) => s !== i + 1)) problems.push(`execution ${e.id} event sequences are not 1..n: ${seqs.join(',')}`);
  if (rec.lastSequence !== rec.events.length) problems.push(`execution ${e.id} lastSequence ${rec.lastSequence} with ${rec.events.length} events`);
  const starts = rec.events.filter((x) => x.type === 'workflow-start').length;
  const finals = rec.events.filter((x) => x.type === 'workflow-complete').length;
  if (finals > 1) problems.push(`execution ${e.id} completed ${finals} times`);
  if (starts < 1) problems.push(`execution ${e.id} has no workflow-start`);
}

/** Resumes one cut reader with Last-Event-ID and checks the union against the log. */
async function resumeReader(url: string, log: ReaderLog, rec: ExecRecord, problems: string[]): Promise<void> {
  const ids = log.frames.map((f) => f.id);
  if (ids.some((id, i) => id !== i + 1)) return void problems.push(`reader of ${log.executionId} saw ids ${ids.join(',')} (not 1..k)`);
  for (const f of log.frames) {
    const ev = rec.events[f.id - 1];
    if (f.event !== 'workflow-result' && (!ev || ev.type !== f.event)) problems.push(`reader of ${log.executionId} saw ${f.id}:${f.event}, the log has ${ev?.type}`);
  }
  if (log.ended) return;
  const last = ids.length;
  const controller = new AbortController();
  // a suspended run's stream stays open: when the reader already has every record, listen briefly for strays
  const nothingLeft = rec.status === 'suspended' && last >= rec.lastSequence;
  const timer = setTimeout(() => controller.abort(), nothingLeft ? 300 : 5_000);
  const after: Array<{ id: number; event: string }> = [];
  try {
    const res = await fetch(`${url}/workflows/${log.workflow}/executions/${log.executionId}/stream`, { headers: { 'last-event-id': String(last) }, signal: controller.signal });
    if (res.status !== 200) return void problems.push(`attach ${log.executionId} after the restart answered ${res.status}`);
    for await (const f of readSse(res)) {
      after.push({ id: Number(f.id), event: f.event ?? '' });
      // a suspended run's stream stays open: stop once the log's last record arrived
      if (f.event === 'workflow-result' || (rec.status === 'suspended' && Number(f.id) >= rec.lastSequence)) break;
    }
  } catch (err) {
    if ((err as Error).name !== 'AbortError') throw err;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  const expected: number[] = [];
  for (let s = last + 1; s <= rec.lastSequence; s++) expected.push(s);
  if (rec.status === 'completed') expected.push(rec.lastSequence + 1); // workflow-result
  const got = after.map((f) => f.id);
  if (got.join(',') !== expected.join(',')) problems.push(`reader of ${log.executionId} resumed after ${last}: got ${got.join(',') || 'nothing'}, expected ${expected.join(',') || 'nothing'}`);
  for (const f of after) {
    const ev = rec.events[f.id - 1];
    if (f.event !== 'workflow-result' && ev?.type !== f.event) problems.push(`resumed reader of ${log.executionId} got ${f.id}:${f.event}, the log has ${ev?.type}`);
  }
}

export interface VerifyResult {
  problems: string[];
  settleMs: number;
  executions: number;
  suspended: number;
  messages: number;
  readersResumed: number;
}

export async function verifyAfterRestart(
  url: string,
  ledger: Ledger,
  opts: { userId: string; conversations: string[]; readersToResume: number; resumeSuspended: number; random: () => number },
): Promise<VerifyResult> {
  const problems: string[] = [];
  const settleMs = await settle(url);
  const { records, duplicates } = await listExecutions(url);
  for (const d of duplicates) problems.push(`execution ${d} is listed twice`);
  for (const rec of records.values()) if (rec.status === 'running' || rec.status === 'error') problems.push(`execution ${rec.id} is ${rec.status}`);
  for (const e of ledger.executions.values()) checkExecution(e, records.get(e.id), problems);

  // memory: every acknowledged message exactly once, no message twice
  let messages = 0;
  for (const cid of opts.conversations) {
    const r = await getJson(`${url}/api/memory/conversations/${cid}/messages?limit=1000&userId=${opts.userId}`);
    if (r.status !== 200) {
      problems.push(`messages of ${cid} answered ${r.status} ${JSON.stringify(r.body)}`);
      continue;
    }
    const counts = new Map<string, number>();
    for (const m of r.body.data.messages as Array<{ id: string }>) counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
    messages += counts.size;
    for (const [id, n] of counts) if (n > 1) problems.push(`message ${id} is listed ${n} times in ${cid}`);
    for (const [id, c] of ledger.ackedMessages) if (c === cid && !counts.has(id)) problems.push(`acknowledged message ${id} is missing from ${cid}`);
    for (const id of counts.keys()) if (!ledger.triedMessages.has(id)) problems.push(`message ${id} in ${cid} was never sent`);
  }
  for (const cid of ledger.agentConversations) {
    const r = await getJson(`${url}/api/memory/conversations/${cid}/messages?limit=1000&userId=${opts.userId}`);
    if (r.status === 404) continue; // the run was cut before its first memory write
    const ids = (r.body.data?.messages ?? []).map((m: { id: string }) => m.id);
    if (new Set(ids).size !== ids.length) problems.push(`agent conversation ${cid} lists a message twice: ${ids.join(',')}`);
  }

  // agents: a run cut by the kill is closed at boot, never left working
  for (let page = 0; page < 1000; page++) {
    const r = await getJson(`${url}/agents/assistant/history?page=${page}&limit=100`);
    if (r.status !== 200) {
      problems.push(`history answered ${r.status}`);
      break;
    }
    for (const entry of r.body.data.entries as Array<{ id: string; status: string }>) if (entry.status === 'working') problems.push(`agent run ${entry.id} is still working after recovery`);
    if (page + 1 >= r.body.data.pagination.totalPages) break;
  }

  // stream resumption: readers cut by the kill (or by their own time bound) pick up with Last-Event-ID
  const cut = ledger.readers.filter((l) => !l.ended && l.frames.length > 0 && !(l as { checked?: boolean }).checked);
  const sample = cut.sort(() => opts.random() - 0.5).slice(0, opts.readersToResume);
  for (const log of sample) {
    const rec = records.get(log.executionId);
    if (!rec) problems.push(`execution ${log.executionId} streamed ${log.frames.length} frames but is missing`);
    else await resumeReader(url, log, rec, problems);
    (log as { checked?: boolean }).checked = true;
  }
  for (const log of ledger.readers.filter((l) => l.ended)) {
    const ids = log.frames.map((f) => f.id);
    if (ids.some((id, i) => id !== i + 1)) problems.push(`finished reader of ${log.executionId} saw ids ${ids.join(',')}`);
  }

  // suspended executions still resume after the restart
  const suspended = [...records.values()].filter((r) => r.status === 'suspended');
  for (const rec of suspended.slice(0, opts.resumeSuspended)) {
    const e = ledger.executions.get(rec.id);
    if (e) e.resumeTried = true;
    const res = await fetch(`${url}/workflows/${rec.workflowId}/executions/${rec.id}/resume`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ resumeData: { approved: true } }),
      signal: AbortSignal.timeout(15_000),
    });
    const body = (await res.json()) as { data?: { status?: string; result?: unknown } };
    if (res.status !== 200 || body.data?.status !== 'completed') problems.push(`resuming ${rec.id} after the restart answered ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    else if (e) e.resumeAcked = { status: 'completed', result: body.data.result };
  }
  return { problems, settleMs, executions: records.size, suspended: suspended.length, messages, readersResumed: sample.length };
}
