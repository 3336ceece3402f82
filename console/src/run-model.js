// Pure derivations from a run's event log and its workflow definition: the run status, the step rows of the
// timeline (nesting from the definition, timing and data from the events) and the time span of the run.
const STATUS_OF = {
  'workflow-start': 'running',
  'workflow-suspended': 'suspended',
  'workflow-complete': 'completed',
  'workflow-cancelled': 'cancelled',
  'workflow-error': 'error',
};

export function runStatus(events, fallback) {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'workflow-result') return e.data.status;
    if (STATUS_OF[e.type]) return STATUS_OF[e.type];
  }
  return fallback;
}

/**
 * The definition's steps as a flat list with depth, children after their parent. How a step shows is
 * the server's word (`nest`: the tag of a step holding others, `childOutput`), so a new step kind
 * needs no change here.
 */
export function flattenSteps(steps, depth = 0, parent) {
  const out = [];
  for (const s of steps ?? []) {
    out.push({ id: s.id, name: s.name ?? s.id, type: s.type, depth, parent, def: s, nest: s.nest });
    const kids = s.subSteps ?? (s.nestedStep ? [s.nestedStep] : []);
    out.push(...flattenSteps(kids, depth + 1, s.id));
  }
  return out;
}

/**
 * Per step id: first start, last end, input, output, status, error, attempts, from the events.
 * `tries` lists each run of the step: its number (`metadata.attempt` of its step-start, else its
 * rank), its start and end, and for a failed attempt that a retry follows (step-retry) its error
 * and when the next attempt runs.
 */
export function stepRecords(events) {
  const recs = new Map();
  const rec = (id) => {
    let r = recs.get(id);
    if (!r) recs.set(id, (r = { id, attempts: 0, tries: [] }));
    return r;
  };
  const lastTry = (r) => r.tries[r.tries.length - 1];
  for (const e of events) {
    const d = e.data ?? {};
    const t = Date.parse(d.timestamp);
    if (e.type === 'step-start' && d.from) {
      const r = rec(d.from);
      r.attempts++;
      const attempt = d.metadata?.attempt ?? r.tries.length + 1;
      const prev = lastTry(r);
      // a run recovered after a crash is the same attempt started again
      if (prev && prev.attempt === attempt && prev.end === undefined) prev.start = t;
      else r.tries.push({ attempt, start: t, status: 'running' });
      r.start ??= t;
      r.lastStart = t;
      r.end = undefined;
      r.input = d.input;
      r.status = 'running';
      r.stepIndex = d.stepIndex;
      r.stepType = d.stepType;
      r.firstSeq ??= e.seq;
    } else if (e.type === 'step-retry' && d.from) {
      const r = rec(d.from);
      const tr = lastTry(r);
      if (tr) Object.assign(tr, { end: t, status: 'error', error: d.error, retryAt: Date.parse(d.retryAt) });
      r.end = t;
      r.status = 'retrying';
      r.retryAt = Date.parse(d.retryAt);
    } else if (e.type === 'step-complete' && d.from) {
      const r = rec(d.from);
      r.start ??= t;
      r.end = t;
      r.status = d.status;
      const tr = lastTry(r);
      if (tr && tr.end === undefined) Object.assign(tr, { end: t, status: d.status });
      if ('output' in d) r.output = d.output;
      if (d.input !== undefined) r.input ??= d.input;
      if (d.metadata?.reason) r.reason = d.metadata.reason;
    } else if (e.type === 'workflow-suspended' && d.from) {
      const r = rec(d.from);
      r.start ??= t;
      r.end = t;
      r.status = 'suspended';
      r.suspendData = d.metadata?.suspendData;
      r.reason = d.metadata?.reason;
    } else if (e.type === 'workflow-error' && d.error?.stepId) {
      const r = rec(d.error.stepId);
      r.end = t;
      r.status = 'error';
      r.error = d.error;
      const tr = lastTry(r);
      if (tr && tr.end === undefined) Object.assign(tr, { end: t, status: 'error', error: d.error });
    }
  }
  return recs;
}

/** [t0, t1] of the run in epoch ms; `now` extends a live run. */
export function timeSpan(events, live, now = Date.now()) {
  if (events.length === 0) return [now, now + 1];
  const t0 = Date.parse(events[0].data?.timestamp);
  const last = Date.parse(events[events.length - 1].data?.timestamp);
  const t1 = live ? Math.max(now, last) : last;
  return [t0, Math.max(t1, t0 + 1)];
}

/** The top-level step that contains `stepId` (itself when top-level); `a/b` path ids name their first segment. */
export function topLevelOf(steps, stepId) {
  if (!stepId) return undefined;
  const first = stepId.split('/')[0];
  if ((steps ?? []).some((s) => s.id === first)) return first;
  const flat = flattenSteps(steps);
  let row = flat.find((r) => r.id === stepId);
  while (row?.parent) row = flat.find((r) => r.id === row.parent);
  return row?.id;
}
