// One workflow run: header with status and actions (cancel with confirmation, resume form), the steps as a Gantt
// with nesting, the selected step's input/output/error and its replay form, then events, logs and spans. Events
// come only from the execution's SSE stream (attach route), followed from sequence 0 and resumed with
// Last-Event-ID after any disconnect, so the page holds exactly the log's events.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { enc, get, post } from './api.js';
import { followStream } from './event-stream.js';
import { JsonView } from './json-view.js';
import { SchemaForm } from './schema-form.js';
import { EventsPanel, LogsPanel, SpansPanel } from './run-panels.js';
import { ReplayDiff } from './replay-diff.js';
import { flattenSteps, runStatus, stepRecords, timeSpan, topLevelOf } from './run-model.js';
import { linkTo, navigate, patchParams } from './url-state.js';
import { fmtDuration, fmtTime } from './format.js';

/** Follows the run's stream; re-renders at most once per animation frame however fast events arrive. */
function useRunEvents(wf, id) {
  const events = useRef([]);
  const result = useRef(undefined);
  const [version, setVersion] = useState(0);
  const [conn, setConn] = useState('connecting');
  useEffect(() => {
    events.current = [];
    result.current = undefined;
    setVersion((v) => v + 1);
    let frame = 0;
    const s = followStream(`/workflows/${enc(wf)}/executions/${enc(id)}/stream`, {
      onEvent: (ev) => {
        // workflow-result closes the stream (its id is one past the log's last sequence): the run's outcome, not a log event
        if (ev.type === 'workflow-result') result.current = ev;
        else events.current.push(ev);
        if (!frame) frame = requestAnimationFrame(() => ((frame = 0), setVersion((v) => v + 1)));
      },
      onState: setConn,
    });
    return () => {
      cancelAnimationFrame(frame);
      s.close();
    };
  }, [wf, id]);
  return { events: events.current, result: result.current, version, conn };
}

function useNow(active) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(t);
  }, [active]);
  return now;
}

function CancelControl({ wf, id }) {
  const [asking, setAsking] = useState(false);
  const [reason, setReason] = useState('');
  const [err, setErr] = useState('');
  if (!asking) return html`<button type="button" class="danger" name="cancel" onClick=${() => setAsking(true)}>Cancel run…</button>`;
  const confirm = async () => {
    try {
      await post(`/workflows/${enc(wf)}/executions/${enc(id)}/cancel`, reason ? { reason } : {});
      setAsking(false);
    } catch (e) {
      setErr(e.message);
    }
  };
  return html`<div class="confirm" role="dialog" aria-label="Confirm cancel">
    <span>Cancel this run? The step in flight is aborted.</span>
    <input name="reason" placeholder="reason (optional)" value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} />
    <button type="button" class="danger" name="confirm-cancel" onClick=${confirm}>Yes, cancel it</button>
    <button type="button" onClick=${() => setAsking(false)}>Keep running</button>
    ${err ? html`<span class="error">${err}</span>` : null}
  </div>`;
}

function ResumePanel({ wf, id, def, defFailed, suspension }) {
  const stepId = suspension?.stepId;
  const flat = flattenSteps(def?.steps);
  const step = flat.find((s) => s.id === stepId)?.def;
  const schema = step?.resumeSchema ?? step?.nestedStep?.resumeSchema ?? def?.resumeSchema ?? null;
  // the state record and the definition are fetched side by side: until the definition is in, the schema is
  // unknown, and a form built then would settle on raw JSON for good (its mode is picked once, at mount); a
  // definition that cannot be read leaves raw JSON, the one mode that needs no schema
  const resume = async (resumeData) => {
    try {
      await post(`/workflows/${enc(wf)}/executions/${enc(id)}/resume`, resumeData === undefined ? {} : { resumeData });
      return {};
    } catch (e) {
      return { error: e.message };
    }
  };
  return html`<div class="resume-panel panel" data-resume-step=${stepId}>
    <div class="panel-head">Suspended at <strong>${stepId}</strong>${suspension?.reason ? html` — ${suspension.reason}` : null}</div>
    ${suspension?.suspendData !== undefined ? html`<${JsonView} label="Suspend data" value=${suspension.suspendData} />` : null}
    ${def || defFailed ? html`<${SchemaForm} key=${JSON.stringify(schema)} name="resume" schema=${schema} submitLabel="Resume" onSubmit=${resume} />` : html`<p class="empty">Loading the resume form…</p>`}
  </div>`;
}

function ReplayForm({ wf, id, step, input }) {
  const [text, setText] = useState(JSON.stringify(input ?? null, null, 2));
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  // prefilled with the recorded input as soon as the step's events are in (and again for another step or run)
  const recorded = JSON.stringify(input ?? null, null, 2);
  useEffect(() => setText(recorded), [step.id, id, recorded]);
  const submit = async (e) => {
    e.preventDefault();
    let inputData;
    try {
      inputData = JSON.parse(text);
    } catch (x) {
      return setErr(`Not valid JSON: ${x.message}`);
    }
    setBusy(true);
    setErr('');
    try {
      const r = await post(`/workflows/${enc(wf)}/executions/${enc(id)}/replay`, { stepId: step.id, inputData });
      navigate({ run: r.executionId, wf, tab: 'diff' });
    } catch (x) {
      setErr(x.body?.executionId ? `${x.message} (run ${x.body.executionId})` : x.message);
      if (x.body?.executionId) navigate({ run: x.body.executionId, wf, tab: 'diff' });
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="replay-form" name="replay" onSubmit=${submit}>
    <label>Input of <strong>${step.name}</strong> for the replay (edit freely)</label>
    <textarea name="inputData" class="mono" rows="6" value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>
    ${err ? html`<div class="form-error" role="alert">${err}</div>` : null}
    <button type="submit" class="primary" disabled=${busy}>${busy ? 'Replaying…' : `Replay from ${step.id}`}</button>
  </form>`;
}

function Gantt({ rows, recs, span, selected, status, replayFrom }) {
  const [t0, t1] = span;
  const width = t1 - t0;
  const replayTop = topLevelOf(
    rows.filter((r) => r.depth === 0).map((r) => r.def),
    replayFrom,
  );
  const replayIndex = replayTop ? rows.findIndex((r) => r.id === replayTop) : -1;
  return html`<div class="gantt" role="table" aria-label="Steps">
    <div class="g-head">
      <div>Step</div>
      <div class="g-scale"><span>0</span><span>${fmtDuration(width / 2)}</span><span>${fmtDuration(width)}</span></div>
      <div>Duration</div>
    </div>
    ${rows.map((row, i) => {
      const own = recs.get(row.id);
      // sub-steps report no events of their own: they run within their parent's bar
      let parentRec;
      for (let p = row.parent; p && !parentRec; p = rows.find((r) => r.id === p)?.parent) parentRec = recs.get(p);
      const rec = own ?? parentRec;
      const reused = replayIndex > 0 && row.depth === 0 && i < replayIndex && !own;
      const st = own?.status ?? (reused ? 'reused' : rec && !own ? 'inherited' : status === 'running' || status === 'suspended' ? 'pending' : 'not-run');
      const start = rec?.start;
      const end = rec?.end ?? (rec?.status === 'running' && status === 'running' ? t1 : rec?.start);
      const left = start !== undefined ? ((start - t0) / width) * 100 : 0;
      const w = start !== undefined ? Math.max(0.6, ((end - start) / width) * 100) : 0;
      return html`<a
        class=${`g-row depth-${row.depth} ${selected === row.id ? 'selected' : ''}`}
        key=${row.id}
        href=${linkTo({ ...Object.fromEntries(new URLSearchParams(location.search)), step: row.id })}
        data-step-id=${row.id}
        data-step-status=${st}
        role="row"
      >
        <div class="g-name" style=${{ paddingLeft: `${row.depth * 16 + 4}px` }}>
          <span class=${`dot status-${st}`}></span
          >${row.name}${row.nest ? html` <span class="tag">${row.nest}</span>` : null}${reused ? html` <span class="tag">reused</span>` : null}${own?.tries.length > 1 ? html` <span class="tag" data-attempts=${own.tries.length}>${own.tries.length} attempts</span>` : own?.attempts > 1 ? html` <span class="tag">${own.attempts} runs</span>` : null}
        </div>
        <div class="g-track">
          ${
            own?.tries.length > 1
              ? own.tries.map((tr) => {
                  // one bar per attempt: the gaps between them are the backoffs
                  const trEnd = tr.end ?? (status === 'running' ? t1 : tr.start);
                  return html`<div
                    class=${`g-bar status-${tr.status}`}
                    data-attempt=${tr.attempt}
                    title=${`Attempt ${tr.attempt}: ${tr.status}${tr.error?.message ? ` (${tr.error.message})` : ''}`}
                    style=${{ left: `${((tr.start - t0) / width) * 100}%`, width: `${Math.max(0.6, ((trEnd - tr.start) / width) * 100)}%` }}
                  ></div>`;
                })
              : start !== undefined
                ? html`<div class=${`g-bar status-${st} ${own ? '' : 'ghost'}`} style=${{ left: `${left}%`, width: `${w}%` }}></div>`
                : null
          }
        </div>
        <div class="g-dur">${own && own.end !== undefined ? fmtDuration(own.end - own.start) : own ? '…' : ''}</div>
      </a>`;
    })}
  </div>`;
}

function StepInspector({ wf, id, row, rec, runStatusNow, parentInput, parentOutput }) {
  if (!row) return html`<div class="inspector panel"><p class="empty">Select a step to see its input, output and error.</p></div>`;
  // nested steps too: a server that replays only top-level steps answers with a 400 shown in the form
  const canReplay = runStatusNow !== 'running';
  return html`<div class="inspector panel" data-inspected-step=${row.id}>
    <div class="panel-head">${row.name} <span class="dim">${row.type}${rec?.attempts ? ` · ${rec.status}` : ''}</span></div>
    ${rec ? html`<p class="dim">Started ${fmtTime(rec.start)}${rec.end ? ` · took ${fmtDuration(rec.end - rec.start)}` : ''}${rec.reason ? ` · ${rec.reason}` : ''}</p>` : html`<p class="dim">This step reported no events${row.depth > 0 ? ' (it runs inside its parent step)' : ''}.</p>`}
    ${
      rec?.tries?.length > 1 || rec?.status === 'retrying'
        ? html`<ol class="attempts" aria-label="Attempts">
            ${rec.tries.map(
              (tr) =>
                html`<li data-attempt=${tr.attempt}>
                  Attempt ${tr.attempt}: <span class=${`status-${tr.status}`}>${tr.status}</span>${tr.end !== undefined ? ` · ${fmtDuration(tr.end - tr.start)}` : ''}${
                    tr.error?.message ? ` · ${tr.error.message}` : ''
                  }${tr.retryAt ? ` · retry at ${fmtTime(tr.retryAt)}` : ''}
                </li>`,
            )}
          </ol>`
        : null
    }
    <${JsonView} label="Input" value=${rec?.input ?? parentInput} />
    <${JsonView} label="Output" value=${rec?.output ?? parentOutput} />
    ${rec?.error ? html`<${JsonView} label="Error" value=${rec.error} />` : null} ${rec?.suspendData !== undefined ? html`<${JsonView} label="Suspend data" value=${rec.suspendData} />` : null}
    ${
      canReplay
        ? html`<details class="replay" open=${new URLSearchParams(location.search).get('replay') === row.id}>
            <summary>Replay from this step</summary>
            <${ReplayForm} wf=${wf} id=${id} step=${row} input=${rec?.input ?? parentInput} />
          </details>`
        : null
    }
  </div>`;
}

export function RunView({ p }) {
  const { run: id, wf } = p;
  const [state, setState] = useState(null);
  const [def, setDef] = useState(null);
  const [defFailed, setDefFailed] = useState(false);
  const [err, setErr] = useState('');
  const { events, result, version, conn } = useRunEvents(wf, id);
  const status = result?.data?.status ?? runStatus(events, state?.status);
  const now = useNow(status === 'running');

  useEffect(() => {
    get(`/workflows/${enc(wf)}`).then(setDef, (e) => {
      setDefFailed(true);
      setErr(e.message);
    });
  }, [wf]);
  // the state record again whenever the run reaches a resting point (suspension details, cancellation, lineage)
  useEffect(() => {
    get(`/workflows/${enc(wf)}/executions/${enc(id)}/state`).then(setState, (e) => setErr(e.message));
  }, [wf, id, status]);

  const recs = useMemo(() => stepRecords(events), [version]);
  const rows = useMemo(() => flattenSteps(def?.steps), [def]);
  const span = timeSpan(events, status === 'running', now);
  const selected = p.step;
  const row = rows.find((r) => r.id === selected);
  // a sub-step without events of its own: its parent's input (all sub-steps get the parent's data) and its share of the output
  let parentOutput;
  let parentInput;
  if (row?.parent) {
    const parentRow = rows.find((r) => r.id === row.parent);
    const po = recs.get(row.parent)?.output;
    // the nearest ancestor that recorded events (sub-steps of sub-steps record none either)
    for (let a = row.parent; a && parentInput === undefined; a = rows.find((r) => r.id === a)?.parent) parentInput = recs.get(a)?.input;
    const share = parentRow?.def.childOutput;
    if (share === 'by-index' && Array.isArray(po)) parentOutput = po[(parentRow.def.subSteps ?? []).findIndex((s) => s.id === row.id)];
    else if (share === 'whole') parentOutput = po;
  }
  const tab = p.tab ?? (state?.replayedFromExecutionId ? 'diff' : 'events');
  const suspension = state?.status === 'suspended' && status === 'suspended' ? state.suspension : undefined;
  const tabs = [['events', 'Events'], ['logs', 'Logs'], ['spans', 'Spans'], ...(state?.replayedFromExecutionId ? [['diff', 'Compare with source']] : [])];
  return html`<section class="run-view" data-execution-id=${id}>
    <header class="bar run-head">
      <a href=${linkTo({})} class="back">← Runs</a>
      <h2>${def?.name ?? wf} <span class="mono dim" title=${id}>${id}</span></h2>
      <span class=${`status status-${status}`} data-run-status=${status}>${status ?? '…'}</span>
      <span class=${`feed feed-${conn}`} data-stream=${conn}>${conn}</span>
      ${status === 'running' || status === 'suspended' ? html`<${CancelControl} wf=${wf} id=${id} />` : null}
    </header>
    ${err ? html`<p class="error" role="alert">${err}</p>` : null}
    <div class="run-meta">
      <span>Started ${fmtTime(state?.startAt)}</span>
      ${state?.endAt ? html`<span>Ended ${fmtTime(state.endAt)} · ${fmtDuration(Date.parse(state.endAt) - Date.parse(state.startAt))}</span>` : null}
      ${state?.userId ? html`<span>User ${state.userId}</span>` : null}
      ${
        state?.replayedFromExecutionId
          ? html`<span class="lineage" data-replayed-from=${state.replayedFromExecutionId}
              >Replay of <a href=${linkTo({ run: state.replayedFromExecutionId, wf })}>${state.replayedFromExecutionId}</a> from step <strong>${state.replayFromStepId}</strong></span
            >`
          : null
      }
      ${state?.metadata?.traceId ? html`<span class="mono">trace ${state.metadata.traceId}</span>` : null}
    </div>
    ${suspension ? html`<${ResumePanel} wf=${wf} id=${id} def=${def} defFailed=${defFailed} suspension=${suspension} />` : null}
    ${state?.error ? html`<div class="panel"><${JsonView} label="Run error" value=${state.error} /></div>` : null}
    <div class="run-main">
      <${Gantt} rows=${rows} recs=${recs} span=${span} selected=${selected} status=${status} replayFrom=${state?.replayFromStepId} />
      <${StepInspector} wf=${wf} id=${id} row=${row} rec=${row ? recs.get(row.id) : undefined} runStatusNow=${status} parentInput=${parentInput} parentOutput=${parentOutput} />
    </div>
    <div class="io">
      <${JsonView} label="Run input" value=${state?.input} />
      ${state?.output !== undefined ? html`<${JsonView} label="Run output" value=${state.output} />` : null}
    </div>
    <nav class="tabs">
      ${tabs.map(([k, label]) => html`<button type="button" class=${tab === k ? 'active' : ''} data-tab=${k} onClick=${() => patchParams({ tab: k }, { push: false })}>${label}</button>`)}
    </nav>
    <div hidden=${tab !== 'events'}><${EventsPanel} events=${events} onPick=${(e) => e.data?.from && rows.some((r) => r.id === e.data.from) && patchParams({ step: e.data.from })} /></div>
    ${tab === 'logs' ? html`<${LogsPanel} executionId=${id} />` : null}
    ${tab === 'spans' ? html`<${SpansPanel} entityType="workflow" entityId=${wf} runId=${id} traceId=${state?.metadata?.traceId} version=${status} />` : null}
    ${tab === 'diff' && state?.replayedFromExecutionId ? html`<${ReplayDiff} wf=${wf} replay=${state} def=${def} status=${status} />` : null}
  </section>`;
}
