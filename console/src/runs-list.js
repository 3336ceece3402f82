// The runs list: workflow executions and agent runs in one table, filters and id search in the URL, paging,
// and live updates pushed over /ws/observability (every span start/end of a run triggers one refetch) with a
// "pause live" toggle that counts the runs changed meanwhile.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { enc, get, qs } from './api.js';
import { liveSocket } from './live-socket.js';
import { linkTo, patchParams } from './url-state.js';
import { fmtDuration, fmtTime, preview, short } from './format.js';

const PAGE = 25;
const STATUSES = ['running', 'suspended', 'completed', 'cancelled', 'error'];
// agent history statuses → the list's vocabulary
const AGENT_STATUS = { working: 'running', completed: 'completed', error: 'error', cancelled: 'cancelled' };

/**
 * The run a pushed span belongs to: its trace, which is one per top-level run (a run's steps, model calls and tool
 * calls, and the sub-workflows and agents it calls, share it), else the run id the span names.
 */
const runOf = (span) => {
  const a = span?.attributes ?? {};
  return span?.traceId ?? a['workflow.execution.id'] ?? a['agent.run.id'] ?? 'unknown';
};

const toIso = (v) => (v ? new Date(v).toISOString() : undefined);

/** `a=1, b=x` or a JSON object → the `metadata` query value */
function metadataParam(text) {
  if (!text) return undefined;
  const t = text.trim();
  if (t.startsWith('{')) return t;
  const obj = {};
  for (const part of t.split(',')) {
    const [k, ...rest] = part.split('=');
    if (!k.trim()) continue;
    const raw = rest.join('=').trim();
    try {
      obj[k.trim()] = JSON.parse(raw);
    } catch {
      obj[k.trim()] = raw;
    }
  }
  return JSON.stringify(obj);
}

async function loadRuns(p, catalog) {
  const page = Math.max(0, Number(p.page ?? 0) || 0);
  const searching = Boolean(p.q);
  const limit = searching ? 500 : PAGE;
  const rows = [];
  let total = 0;
  if (p.kind !== 'agent') {
    const body = await get(
      `/workflows/executions${qs({ workflowId: p.workflowId, status: p.status, from: toIso(p.from), to: toIso(p.to), metadata: metadataParam(p.metadata), limit, offset: searching ? 0 : page * PAGE })}`,
      { envelope: true },
    );
    total += body.total ?? body.data.length;
    for (const r of body.data) {
      const end = r.status === 'running' || r.status === 'suspended' ? undefined : r.updatedAt;
      rows.push({
        kind: 'workflow',
        id: r.id,
        name: r.workflowName ?? r.workflowId,
        owner: r.workflowId,
        status: r.status,
        createdAt: r.createdAt,
        durationMs: end ? Date.parse(end) - Date.parse(r.createdAt) : undefined,
        input: r.input,
        replayedFrom: r.replayedFromExecutionId,
        href: linkTo({ run: r.id, wf: r.workflowId }),
      });
    }
  }
  if (p.kind !== 'workflow' && !p.workflowId && !p.metadata) {
    const agents = p.agentId ? catalog.agents.filter((a) => a.id === p.agentId) : catalog.agents;
    for (const a of agents) {
      const h = await get(`/agents/${enc(a.id)}/history${qs({ page: searching ? 0 : page, limit: searching ? 100 : PAGE })}`);
      total += h.pagination?.total ?? h.entries.length;
      for (const e of h.entries) {
        const status = AGENT_STATUS[e.status] ?? e.status;
        if (p.status && status !== p.status) continue;
        if (p.from && Date.parse(e.startTime) < Date.parse(p.from)) continue;
        if (p.to && Date.parse(e.startTime) > Date.parse(p.to)) continue;
        rows.push({
          kind: 'agent',
          id: e.id,
          name: `${a.name} · ${e.operationType}`,
          owner: a.id,
          status,
          createdAt: e.startTime,
          durationMs: e.endTime ? Date.parse(e.endTime) - Date.parse(e.startTime) : undefined,
          input: e.input,
          href: linkTo({ agentRun: e.id, agent: a.id }),
        });
      }
    }
  }
  rows.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  const q = (p.q ?? '').trim().toLowerCase();
  const shown = q ? rows.filter((r) => r.id.toLowerCase().includes(q)) : rows;
  return { rows: shown, total: q ? shown.length : total, page };
}

function Filters({ p, catalog }) {
  const set = (k) => (e) => patchParams({ [k]: e.currentTarget.value, page: '' }, { push: false });
  return html`<form class="filters" onSubmit=${(e) => e.preventDefault()}>
    <label
      >Kind
      <select name="kind" value=${p.kind ?? ''} onChange=${set('kind')}>
        <option value="">all</option>
        <option value="workflow">workflows</option>
        <option value="agent">agents</option>
      </select></label
    >
    <label
      >Workflow
      <select name="workflowId" value=${p.workflowId ?? ''} onChange=${set('workflowId')}>
        <option value="">any</option>
        ${catalog.workflows.map((w) => html`<option value=${w.id}>${w.name}</option>`)}
      </select></label
    >
    <label
      >Agent
      <select name="agentId" value=${p.agentId ?? ''} onChange=${set('agentId')}>
        <option value="">any</option>
        ${catalog.agents.map((a) => html`<option value=${a.id}>${a.name}</option>`)}
      </select></label
    >
    <label
      >Status
      <select name="status" value=${p.status ?? ''} onChange=${set('status')}>
        <option value="">any</option>
        ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
      </select></label
    >
    <label>From <input type="datetime-local" name="from" value=${p.from ?? ''} onChange=${set('from')} /></label>
    <label>To <input type="datetime-local" name="to" value=${p.to ?? ''} onChange=${set('to')} /></label>
    <label>Metadata <input name="metadata" placeholder="key=value, …" value=${p.metadata ?? ''} onChange=${set('metadata')} /></label>
    <label>Id <input name="q" type="search" placeholder="search by id" value=${p.q ?? ''} onInput=${set('q')} /></label>
  </form>`;
}

export function RunsList({ p, catalog }) {
  const [data, setData] = useState({ rows: [], total: 0, page: 0 });
  const [error, setError] = useState('');
  // the runs with span events held back while paused (one run reports many: its own span and each step's)
  const [pending, setPending] = useState(() => new Set());
  const [feed, setFeed] = useState('connecting');
  const paused = p.live === 'paused';
  const params = useRef(p);
  params.current = p;
  const reload = useRef(null);
  const busy = useRef(false);
  const again = useRef(false);

  reload.current = async () => {
    // one load at a time; pushes that arrive meanwhile coalesce into one more
    if (busy.current) return void (again.current = true);
    busy.current = true;
    try {
      setData(await loadRuns(params.current, catalog));
      setError('');
    } catch (err) {
      setError(err.message);
    } finally {
      busy.current = false;
      if (again.current) {
        again.current = false;
        reload.current();
      }
    }
  };

  const key = JSON.stringify({ ...p, live: undefined });
  useEffect(() => void reload.current(), [key, catalog]);

  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  useEffect(() => {
    let timer;
    const sock = liveSocket(
      '/ws/observability',
      {},
      (msg) => {
        if (msg.type !== 'OBSERVABILITY_EVENT') return;
        if (pausedRef.current) return setPending((runs) => (runs.has(runOf(msg.data?.span)) ? runs : new Set(runs).add(runOf(msg.data?.span))));
        clearTimeout(timer);
        timer = setTimeout(() => reload.current(), 60);
      },
      // a refused feed is most likely missing console credentials: the status route says so with a 401
      { console: true, onState: setFeed, onRefused: () => get('/observability/status').catch(() => {}) },
    );
    return () => {
      clearTimeout(timer);
      sock.close();
    };
  }, []);

  const togglePause = () => {
    if (paused) {
      setPending(new Set());
      patchParams({ live: '' }, { push: false });
      reload.current();
    } else patchParams({ live: 'paused' }, { push: false });
  };
  const pages = Math.max(1, Math.ceil(data.total / PAGE));
  return html`<section class="runs">
    <header class="bar">
      <h2>Runs</h2>
      <span class=${`feed feed-${paused ? 'paused' : feed}`} data-feed=${paused ? 'paused' : feed}
        >${paused ? `live paused${pending.size ? ` · ${pending.size} ${pending.size === 1 ? 'run' : 'runs'} changed` : ''}` : feed === 'live' ? 'live' : feed}</span
      >
      <button type="button" class="pause" aria-pressed=${paused} onClick=${togglePause}>${paused ? 'Resume live' : 'Pause live'}</button>
    </header>
    <${Filters} p=${p} catalog=${catalog} />
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <table class="runs-table">
      <thead>
        <tr>
          <th>Status</th>
          <th>Run</th>
          <th>Name</th>
          <th>Started</th>
          <th>Duration</th>
          <th>Input</th>
        </tr>
      </thead>
      <tbody>
        ${data.rows.map(
          (r) =>
            html`<tr key=${r.id} class="run-row" data-execution-id=${r.id} data-status=${r.status} data-kind=${r.kind}>
              <td><span class=${`status status-${r.status}`}>${r.status}</span></td>
              <td><a href=${r.href} title=${r.id}>${short(r.id)}</a>${r.replayedFrom ? html` <span class="tag">replay</span>` : null}</td>
              <td><span class=${`kind kind-${r.kind}`}>${r.kind}</span> ${r.name}</td>
              <td>${fmtTime(r.createdAt)}</td>
              <td>${fmtDuration(r.durationMs)}</td>
              <td class="mono">${preview(r.input, 60)}</td>
            </tr>`,
        )}
        ${
          data.rows.length === 0
            ? html`<tr>
                <td colspan="6" class="empty">No runs match.</td>
              </tr>`
            : null
        }
      </tbody>
    </table>
    <nav class="pager">
      <button type="button" disabled=${data.page <= 0} onClick=${() => patchParams({ page: data.page - 1 || '' })}>← Newer</button>
      <span>page ${data.page + 1} of ${pages} · ${data.total} ${data.total === 1 ? 'run' : 'runs'}</span>
      <button type="button" disabled=${data.page + 1 >= pages} onClick=${() => patchParams({ page: data.page + 1 })}>Older →</button>
    </nav>
  </section>`;
}
