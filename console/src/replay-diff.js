// The replay diff: a replayed run next to its source, step by step (input, output, status, duration). Steps
// before the replay point are reused (restored from the source, not re-run); from there on the first step whose
// input, output or status differs is marked as the divergence.
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { enc, get } from './api.js';
import { JsonView } from './json-view.js';
import { stepRecords, topLevelOf } from './run-model.js';
import { linkTo } from './url-state.js';
import { fmtDuration, preview, same } from './format.js';

/** ExecutionRecord events → the stream's event shape, so one derivation serves both */
const asStream = (events) => (events ?? []).map((e) => ({ seq: e.sequence, type: e.type, data: { ...e, timestamp: e.startTime } }));

function compareRuns(steps, source, replay, replayFromStepId) {
  const a = stepRecords(asStream(source.events));
  const b = stepRecords(asStream(replay.events));
  // a replay from a nested step re-runs the top-level step that contains it
  const from = steps.findIndex((s) => s.id === topLevelOf(steps, replayFromStepId));
  let firstDiff;
  const rows = steps.map((s, i) => {
    const src = a.get(s.id);
    const rep = b.get(s.id);
    const reused = i < from && !rep;
    const diffs = reused ? [] : ['input', 'output', 'status'].filter((k) => !same(src?.[k], rep?.[k]));
    if (diffs.length && firstDiff === undefined) firstDiff = s.id;
    return { id: s.id, name: s.name ?? s.id, src, rep, reused, diffs };
  });
  return { rows, firstDiff, outputDiffers: !same(source.output, replay.output) };
}

function Side({ rec, reused }) {
  if (reused) return html`<td class="reused" colspan="4">reused from the source (not re-run)</td>`;
  if (!rec) return html`<td class="dim" colspan="4">did not run</td>`;
  return html`<td class="mono">${preview(rec.input, 40)}</td>
    <td class="mono">${preview(rec.output, 40)}</td>
    <td><span class=${`status status-${rec.status}`}>${rec.status}</span></td>
    <td>${rec.end !== undefined ? fmtDuration(rec.end - rec.start) : '—'}</td>`;
}

export function ReplayDiff({ wf, replay, def, status }) {
  const [source, setSource] = useState(null);
  const [fresh, setFresh] = useState(replay);
  const [err, setErr] = useState('');
  const [open, setOpen] = useState(null);
  useEffect(() => {
    get(`/workflows/${enc(wf)}/executions/${enc(replay.replayedFromExecutionId)}/state`).then(setSource, (e) => setErr(e.message));
    get(`/workflows/${enc(wf)}/executions/${enc(replay.executionId)}/state`).then(setFresh, (e) => setErr(e.message));
  }, [replay.executionId, status]);
  if (err) return html`<div class="panel"><p class="error">${err}</p></div>`;
  if (!source || !def) return html`<div class="panel"><p class="empty">Loading the source run…</p></div>`;
  const cmp = compareRuns(def.steps, source, fresh, replay.replayFromStepId);
  return html`<div class="panel diff-panel" data-first-diff=${cmp.firstDiff ?? ''}>
    <div class="panel-head">
      Replay vs source
      <a href=${linkTo({ run: source.executionId, wf })}>${source.executionId}</a>
      ${cmp.firstDiff ? html` · first difference at <strong>${cmp.firstDiff}</strong>` : html` · no step differs`}${cmp.outputDiffers ? ' · results differ' : ''}
    </div>
    <table class="diff-table">
      <thead>
        <tr>
          <th rowspan="2">Step</th>
          <th colspan="4">Source</th>
          <th colspan="4">Replay</th>
        </tr>
        <tr>
          <th>Input</th>
          <th>Output</th>
          <th>Status</th>
          <th>Duration</th>
          <th>Input</th>
          <th>Output</th>
          <th>Status</th>
          <th>Duration</th>
        </tr>
      </thead>
      <tbody>
        ${cmp.rows.map(
          (r) =>
            html`<tr
              key=${r.id}
              data-diff-step=${r.id}
              data-differs=${r.diffs.length > 0}
              data-first-diff=${cmp.firstDiff === r.id ? 'true' : undefined}
              class=${`${r.diffs.length ? 'differs' : ''} ${cmp.firstDiff === r.id ? 'first-diff' : ''}`}
              onClick=${() => setOpen(open === r.id ? null : r.id)}
            >
              <td>${cmp.firstDiff === r.id ? html`<span class="tag diverges">diverges</span> ` : null}${r.name}${r.diffs.length ? html` <span class="dim">(${r.diffs.join(', ')})</span>` : null}</td>
              <${Side} rec=${r.src} /><${Side} rec=${r.rep} reused=${r.reused} />
            </tr>`,
        )}
      </tbody>
    </table>
    ${
      open
        ? html`<div class="diff-detail">
            ${['input', 'output'].map((k) => {
              const r = cmp.rows.find((x) => x.id === open);
              return html`<div class="diff-pair"><${JsonView} label=${`Source ${k}`} value=${r.src?.[k]} /><${JsonView} label=${`Replay ${k}`} value=${r.reused ? r.src?.[k] : r.rep?.[k]} /></div>`;
            })}
          </div>`
        : null
    }
    <div class="diff-pair"><${JsonView} label="Source result" value=${source.output} /><${JsonView} label="Replay result" value=${fresh.output} /></div>
  </div>`;
}
