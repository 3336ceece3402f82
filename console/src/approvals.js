// Pending tool approvals across all agents: which calls wait for a person, and the Approve / Deny panel that answers
// them. There is no list route for them: a waiting run's history entry is `working` and carries
// `metadata.pendingApprovals`, so the console reads each agent's newest history on a short poll (and right after a
// decision). Answers go to `POST /agents/:id/runs/:runId/approvals/:approvalId`, whose reply is the run's outcome.
import { useCallback, useRef, useState } from 'preact/hooks';
import { usePolling } from './polling.js';
import { html } from './html.js';
import { enc, get, post, qs } from './api.js';
import { JsonView } from './json-view.js';
import { linkTo } from './url-state.js';

/** how often the pending list is read again; a decision re-reads it at once */
const POLL_MS = 3000;
/** history entries read per agent (newest first): a run waiting behind more newer runs than this is not listed */
const HISTORY_PAGES = 3;
const PAGE_LIMIT = 100;

/** The calls every agent's waiting runs wait for, oldest run first. */
async function readPending(agents) {
  const lists = await Promise.all(
    agents.map(async (agent) => {
      const found = [];
      for (let page = 0; page < HISTORY_PAGES; page++) {
        const h = await get(`/agents/${enc(agent.id)}/history${qs({ page, limit: PAGE_LIMIT })}`, { quiet: true });
        for (const e of h.entries) {
          if (e.status !== 'working') continue;
          for (const a of e.metadata?.pendingApprovals ?? []) found.push({ ...a, agentId: agent.id, agentName: agent.name, runId: e.id, startTime: e.startTime });
        }
        if (page + 1 >= h.pagination.totalPages) break;
      }
      return found;
    }),
  );
  return lists.flat().sort((a, b) => String(a.startTime).localeCompare(String(b.startTime)));
}

/**
 * The pending approvals of `agents`, polled while the tab is visible. `hide(approvalId)` drops one from the list
 * for good once the console has answered it: the history entry may still read `working` for a moment.
 */
export function usePendingApprovals(agents) {
  const [items, setItems] = useState([]);
  const hidden = useRef(new Set());
  const busy = useRef(false);
  const last = useRef('');
  const refresh = useCallback(async () => {
    if (busy.current || !agents?.length) return;
    busy.current = true;
    try {
      const list = (await readPending(agents)).filter((a) => !hidden.current.has(a.approvalId));
      // unchanged lists keep their identity, so the panel does not re-render on every poll
      const key = JSON.stringify(list);
      if (key !== last.current) {
        last.current = key;
        setItems(list);
      }
    } catch {
      // a failed read (server restarting, no credentials yet) keeps the last list; the next poll tries again
    } finally {
      busy.current = false;
    }
  }, [agents]);
  usePolling(refresh, POLL_MS);
  const hide = useCallback(
    (approvalId) => {
      hidden.current.add(approvalId);
      last.current = '';
      setItems((list) => list.filter((a) => a.approvalId !== approvalId));
      refresh();
    },
    [refresh],
  );
  return { items, hide, refresh };
}

/** The run's outcome in a line: the answer text, or that it still waits for other calls. */
function outcomeOf(reply) {
  if (reply?.status === 'awaiting-approval') {
    const n = reply.pendingApprovals?.length ?? 0;
    return { status: 'working', text: `still waiting for ${n} more approval${n === 1 ? '' : 's'}` };
  }
  return { status: 'completed', text: reply?.text ?? '' };
}

function PendingItem({ item, onDecided }) {
  const [denying, setDenying] = useState(false);
  const [reason, setReason] = useState('');
  const [sending, setSending] = useState('');
  const [err, setErr] = useState('');
  const answer = async (approved) => {
    setSending(approved ? 'approve' : 'deny');
    setErr('');
    const body = approved ? { approved } : reason.trim() ? { approved, reason: reason.trim() } : { approved };
    try {
      const reply = await post(`/agents/${enc(item.agentId)}/runs/${enc(item.runId)}/approvals/${enc(item.approvalId)}`, body);
      onDecided(item, { approved, reason: body.reason, ...outcomeOf(reply) });
    } catch (e) {
      // 409: someone else answered first; 404: the run is gone. Either way the list is out of date.
      if (e.status === 409 || e.status === 404) onDecided(item, { approved, reason: body.reason, status: 'error', text: e.message });
      else setErr(e.message);
      setSending('');
    }
  };
  return html`<li class="approval" data-approval-id=${item.approvalId} data-run-id=${item.runId}>
    <div class="approval-head">
      <span class="dim">tool</span> <strong data-tool-name>${item.toolName}</strong> <span class="dim">· agent</span> <span data-agent-id=${item.agentId}>${item.agentName}</span>
      <span class="dim">· run</span> <a class="mono" href=${linkTo({ agent: item.agentId, agentRun: item.runId })}>${item.runId.slice(0, 8)}</a>
    </div>
    <${JsonView} label="Arguments" value=${item.args} />
    ${err ? html`<p class="error" role="alert">${err}</p>` : null}
    ${
      denying
        ? html`<form class="row deny-form" onSubmit=${(e) => (e.preventDefault(), answer(false))}>
            <input name="reason" placeholder="Reason (optional)" value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} autocomplete="off" />
            <button type="submit" name="confirm-deny" class="danger" disabled=${Boolean(sending)}>${sending === 'deny' ? 'Denying…' : 'Deny call'}</button>
            <button type="button" onClick=${() => setDenying(false)} disabled=${Boolean(sending)}>Cancel</button>
          </form>`
        : html`<div class="row">
            <button type="button" name="approve" class="primary" disabled=${Boolean(sending)} onClick=${() => answer(true)}>${sending === 'approve' ? 'Approving…' : 'Approve'}</button>
            <button type="button" name="deny" disabled=${Boolean(sending)} onClick=${() => setDenying(true)}>Deny…</button>
          </div>`
    }
  </li>`;
}

/** Pending approvals with Approve / Deny, then the decisions made here with the outcome of their runs. */
export function ApprovalsPanel({ pending }) {
  const [decided, setDecided] = useState([]);
  const onDecided = (item, outcome) => {
    pending.hide(item.approvalId);
    setDecided((list) => [{ ...item, ...outcome }, ...list].slice(0, 10));
  };
  if (pending.items.length === 0 && decided.length === 0) return null;
  return html`<div class="panel approvals">
    <div class="panel-head">Pending approvals <span class="badge" data-count=${pending.items.length}>${pending.items.length}</span></div>
    ${pending.items.length === 0 ? html`<p class="empty">No tool call waits for approval.</p>` : null}
    <ul class="approval-list">
      ${pending.items.map((item) => html`<${PendingItem} key=${item.approvalId} item=${item} onDecided=${onDecided} />`)}
    </ul>
    ${
      decided.length
        ? html`<ul class="decided">
            ${decided.map(
              (d) =>
                html`<li key=${d.approvalId} data-approval-id=${d.approvalId} data-decision=${d.approved ? 'approved' : 'denied'} data-outcome=${d.status}>
                  <span class=${`status status-${d.approved ? 'completed' : 'error'}`}>${d.approved ? 'approved' : 'denied'}</span> <strong>${d.toolName}</strong>
                  <span class="dim">· agent ${d.agentName} · run</span>
                  <a class="mono" href=${linkTo({ agent: d.agentId, agentRun: d.runId })}>${d.runId.slice(0, 8)}</a>${d.reason ? html` <span class="dim">— ${d.reason}</span>` : null}
                  <div class="outcome"><span class="dim">${d.status === 'error' ? 'not recorded:' : `run ${d.status}:`}</span> <span data-outcome-text>${d.text}</span></div>
                </li>`,
            )}
          </ul>`
        : null
    }
  </div>`;
}
