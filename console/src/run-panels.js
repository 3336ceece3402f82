// The lower panels of a run view: the event log (windowed, one row per sequence), the run's log lines (initial
// batch, then live over /ws/logs) and its spans as a waterfall (from the observability API).
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { enc, get, qs } from './api.js';
import { liveSocket } from './live-socket.js';
import { VirtualList } from './virtual-list.js';
import { fmtClock, fmtDuration, preview } from './format.js';

export function EventsPanel({ events, onPick }) {
  return html`<div class="panel events-panel">
    <div class="panel-head">Events <span class="count" data-event-count=${events.length}>${events.length}</span></div>
    <${VirtualList}
      class="events"
      items=${events}
      height=${340}
      follow=${true}
      renderRow=${(e) =>
        html`<div class="event-row" key=${e.seq} data-seq=${e.seq} data-type=${e.type} onClick=${() => onPick(e)}>
          <span class="seq">${e.seq}</span><span class="time">${fmtClock(e.data?.timestamp)}</span> <span class=${`etype etype-${e.type}`}>${e.type}</span
          ><span class="from">${e.data?.from ?? ''}</span> <span class="status-text">${e.data?.status ?? ''}</span
          ><span class="mono dim">${preview(e.data?.output ?? e.data?.input ?? e.data?.result, 70)}</span>
        </div>`}
    />
  </div>`;
}

export function LogsPanel({ executionId }) {
  const [logs, setLogs] = useState([]);
  const [err, setErr] = useState('');
  useEffect(() => {
    let live = [];
    const sock = liveSocket('/ws/logs', { executionId, limit: 1000 }, (msg) => {
      if (msg.type === 'initial') live = msg.logs ?? [];
      else if (msg.type === 'update') live = [...live, ...(msg.logs ?? [])];
      else return;
      setLogs(live);
    });
    get(`/api/logs${qs({ executionId, limit: 1000 })}`)
      .then((l) => setLogs((cur) => (cur.length ? cur : l)))
      .catch((e) => setErr(e.message));
    return () => sock.close();
  }, [executionId]);
  return html`<div class="panel logs-panel">
    <div class="panel-head">Logs <span class="count">${logs.length}</span></div>
    ${err ? html`<p class="error">${err}</p>` : null}
    <${VirtualList}
      class="logs"
      items=${logs}
      height=${300}
      follow=${true}
      renderRow=${(l, i) =>
        html`<div class="log-row" key=${i} data-log-level=${l.level}>
          <span class="time">${fmtClock(l.timestamp)}</span><span class=${`level level-${l.level}`}>${l.level}</span> <span class="msg">${l.msg}</span
          ><span class="mono dim">${l.stepId ?? l.component ?? ''}</span>
        </div>`}
    />
    ${logs.length === 0 ? html`<p class="empty">No log lines for this run.</p>` : null}
  </div>`;
}

/** The run's trace: by metadata.traceId when the run records it, else found among the entity's traces. */
async function findTrace({ entityType, entityId, runId, traceId }) {
  if (traceId) {
    try {
      return await get(`/observability/traces/${enc(traceId)}`);
    } catch {
      /* fall back to the search */
    }
  }
  const { traces } = await get(`/observability/traces${qs({ entityType, entityId, limit: 1000 })}`);
  return traces.find((t) => t.spans.some((s) => s.attributes?.['workflow.execution.id'] === runId || s.attributes?.['agent.run.id'] === runId || s.attributes?.['entity.run.id'] === runId));
}

function flattenTree(nodes, out = []) {
  for (const n of nodes ?? []) {
    out.push(n);
    flattenTree(n.children, out);
  }
  return out;
}

export function SpansPanel({ entityType, entityId, runId, traceId, version }) {
  const [trace, setTrace] = useState(undefined);
  const [err, setErr] = useState('');
  useEffect(() => {
    findTrace({ entityType, entityId, runId, traceId })
      .then((t) => setTrace(t ?? null))
      .catch((e) => setErr(e.message));
  }, [runId, traceId, version]);
  if (err)
    return html`<div class="panel spans-panel">
      <div class="panel-head">Spans</div>
      <p class="error">${err}</p>
    </div>`;
  if (trace === undefined)
    return html`<div class="panel spans-panel">
      <div class="panel-head">Spans</div>
      <p class="empty">Loading…</p>
    </div>`;
  if (!trace)
    return html`<div class="panel spans-panel">
      <div class="panel-head">Spans</div>
      <p class="empty">No spans recorded for this run.</p>
    </div>`;
  const spans = flattenTree(trace.tree);
  const t0 = Math.min(...spans.map((s) => Date.parse(s.startTime)));
  const t1 = Math.max(...spans.map((s) => Date.parse(s.endTime ?? s.startTime) || Date.now()), t0 + 1);
  return html`<div class="panel spans-panel">
    <div class="panel-head">Spans <span class="count">${spans.length}</span> <span class="dim mono">trace ${trace.traceId}</span></div>
    <div class="waterfall">
      ${spans.map((s) => {
        const a = Date.parse(s.startTime);
        const b = s.endTime ? Date.parse(s.endTime) : t1;
        return html`<div class="wf-row" key=${s.spanId} data-span-id=${s.spanId}>
          <div class="wf-name" style=${{ paddingLeft: `${(s.depth ?? 0) * 14}px` }} title=${s.name}>${s.name}</div>
          <div class="wf-track">
            <div class=${`wf-bar code-${s.status?.code ?? 0}`} style=${{ left: `${((a - t0) / (t1 - t0)) * 100}%`, width: `${Math.max(0.4, ((b - a) / (t1 - t0)) * 100)}%` }}></div>
          </div>
          <div class="wf-dur">${fmtDuration(s.duration ?? b - a)}</div>
        </div>`;
      })}
    </div>
  </div>`;
}
