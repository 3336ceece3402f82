// The History view: how much history the server keeps and under which retention policy, from the `history` field
// of GET /observability/status (kept counts, no scan on the server): executions and agent runs kept (per workflow
// and agent), records in the log and removed, the bytes the store takes, then the policy in effect for each
// workflow and agent, the archive, how long tombstones last, how often passes run and this node's last pass.
// Without a retention section the server reports `retention: null` and the view says everything is kept.
// Read on load and every 15 s.
import { useCallback, useState } from 'preact/hooks';
import { html } from './html.js';
import { get } from './api.js';
import { fmtBytes, fmtDuration, fmtPeriod, fmtTime } from './format.js';
import { usePolling } from './polling.js';

const POLL_MS = 15_000;
const num = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : '—');

/** a policy in effect, in words: `keeps all`, or its limits (`newest 10 · 30 d`) */
function policyText(p) {
  if (!p || p.keepsAll) return 'keeps all';
  const parts = [];
  if (p.keepNewest !== undefined) parts.push(`newest ${num(p.keepNewest)}`);
  if (p.keepForMs !== undefined) parts.push(`ended within ${fmtPeriod(p.keepForMs)}`);
  return parts.join(' · ');
}

function PolicyRows({ kind, configured, policies, counts }) {
  const ids = [...new Set([...configured, ...Object.keys(policies ?? {}), ...Object.keys(counts ?? {})])].sort();
  return ids.map((id) => {
    const p = policies?.[id];
    return html`<tr key=${`${kind}:${id}`} data-policy-of=${`${kind}:${id}`}>
      <td><span class="kind">${kind}</span> <strong>${id}</strong></td>
      <td data-kept>${num(counts?.[id] ?? 0)}</td>
      <td data-policy>${p ? policyText(p) : 'keeps all'}</td>
      <td class="dim" data-source>${p ? (p.own ? 'own policy' : p.keepsAll ? 'no policy' : 'global policy') : 'not configured'}</td>
    </tr>`;
  });
}

function LastPass({ pass }) {
  if (!pass) return html`<span class="dim" data-last-pass="none">no pass on this node yet</span>`;
  if (pass.error) return html`<span class="error" data-last-pass="failed">${fmtTime(pass.at)}: failed: ${pass.error}</span>`;
  // one string: htm drops the whitespace of a line break inside text
  const what = `${fmtTime(pass.at)}: removed ${num(pass.executions)} execution(s), ${num(pass.runs)} agent run(s), ${num(pass.records)} record(s) in ${fmtDuration(pass.ms)}`;
  return html`<span data-last-pass="ran">${what}${pass.archive ? html`, archived to <span class="mono">${pass.archive}</span>` : null}</span>`;
}

export function HistoryView({ catalog }) {
  const [history, setHistory] = useState(undefined);
  const [err, setErr] = useState('');
  const refresh = useCallback(
    () =>
      get('/observability/status', { quiet: true }).then(
        (status) => (setHistory(status?.history ?? null), setErr('')),
        (e) => setErr(e.message),
      ),
    [],
  );
  usePolling(refresh, POLL_MS);
  const h = history;
  const r = h?.retention;
  return html`<section class="history">
    <header class="bar"><h2>History</h2></header>
    ${err ? html`<p class="error" role="alert">${err}</p>` : null} ${h === null ? html`<p class="empty">This server does not report the size of its history.</p>` : null}
    ${
      h
        ? html`<div class="panel" data-history-size>
              <div class="panel-head">Kept</div>
              <div class="run-meta">
                <span data-executions>${num(h.executions)} execution(s)</span><span data-agent-runs>${num(h.agentRuns)} agent run(s)</span
                ><span data-records>${num(h.records)} record(s) in the log</span>${h.removedRecords ? html`<span data-removed>${num(h.removedRecords)} removed by retention</span>` : null}${
                  h.storedBytes !== undefined ? html`<span data-stored-bytes title=${`as of ${fmtTime(h.storedBytesAt)}`}>${fmtBytes(h.storedBytes)} on disk</span>` : null
                }
              </div>
            </div>
            <div class="panel" data-retention=${r ? 'on' : 'off'}>
              <div class="panel-head">Retention</div>
              ${
                r
                  ? html`<p data-retention-summary>
                        Terminal executions and agent runs (completed, error, cancelled) go once they break their policy; running, suspended and waiting ones are never removed.
                      </p>
                      <dl class="facts">
                        <dt>Global policy</dt>
                        <dd data-global>${policyText({ ...r, keepsAll: r.keepForMs === undefined && r.keepNewest === undefined })}</dd>
                        <dt>Archive</dt>
                        <dd data-archive>${r.archive === false ? 'none: removed ones are dropped' : html`<span class="mono">${r.archive}</span>`}</dd>
                        <dt>Tombstones</dt>
                        <dd data-tombstones>a removed one answers 404 naming its removal for ${fmtPeriod(r.tombstonesForMs)}</dd>
                        <dt>Passes</dt>
                        <dd data-every>every ${fmtPeriod(r.everyMs)}</dd>
                        <dt>Last pass</dt>
                        <dd><${LastPass} pass=${r.lastPass} /></dd>
                      </dl>`
                  : html`<p data-retention-summary>No retention is configured: every execution and agent run is kept.</p>`
              }
            </div>
            <table class="history-table">
              <thead>
                <tr>
                  <th>Workflow or agent</th>
                  <th>Kept</th>
                  <th>Policy in effect</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                <${PolicyRows} kind="workflow" configured=${catalog.workflows.map((w) => w.id)} policies=${r?.workflows} counts=${h.executionsPerWorkflow} />
                <${PolicyRows} kind="agent" configured=${catalog.agents.map((a) => a.id)} policies=${r?.agents} counts=${h.agentRunsPerAgent} />
              </tbody>
            </table>`
        : null
    }
  </section>`;
}
