// The event store's health in the top bar, from the `store` field of GET /observability/status ({kind, state
// 'ok'|'unavailable'|'full', since, reason?}): a quiet "store ok", or an alert naming the state and its reason.
// A server whose status has no `store` field shows nothing. Read on load and then every 15 s.
// The same answer's `stuckExecutions` (unfinished runs nothing would move; always empty unless something is
// wrong) shows beside it as an alert counting them, each a link to its run with the reason.
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { get } from './api.js';
import { fmtTime } from './format.js';
import { linkTo } from './url-state.js';

const EVERY_MS = 15_000;
const STATES = new Set(['ok', 'unavailable', 'full']);

/** `onChecked(store | null)` runs after each answer (null: the server reports no store). */
export function StoreHealth({ onChecked = () => {} }) {
  const [store, setStore] = useState(null);
  const [stuck, setStuck] = useState([]);
  useEffect(() => {
    let timer;
    let live = true;
    const read = () =>
      // quiet: a 401 here (console key missing) is the live feed's to ask about, not a background poll's
      get('/observability/status', { quiet: true }).then(
        (status) => {
          if (!live) return;
          const s = status?.store && STATES.has(status.store.state) ? status.store : null;
          setStore(s);
          setStuck(Array.isArray(status?.stuckExecutions) ? status.stuckExecutions : []);
          onChecked(s);
          timer = setTimeout(read, EVERY_MS);
        },
        (err) => {
          if (!live) return;
          onChecked(null);
          // refused: asking again every 15 s would change nothing until credentials are given (the app remounts then)
          if (err.status !== 401) timer = setTimeout(read, EVERY_MS);
        },
      );
    read();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, []);
  const stuckBadge = stuck.length > 0 ? html`<${StuckRuns} list=${stuck} />` : null;
  if (!store) return stuckBadge;
  const title = `Event store (${store.kind}) ${store.state}${store.since ? ` since ${fmtTime(store.since)}` : ''}${store.reason ? `: ${store.reason}` : ''}`;
  if (store.state === 'ok') return html`${stuckBadge}<span class="store-health store-ok" data-store-state="ok" title=${title}>store ok</span>`;
  return html`${stuckBadge}<span class="store-health store-down" role="alert" data-store-state=${store.state} title=${title}
      >Event store ${store.state}${store.reason ? html`: <span class="store-reason">${store.reason}</span>` : null}</span
    >`;
}

/** The stuck runs: a count that opens to one link per run, with its reason and since when. */
function StuckRuns({ list }) {
  return html`<details class="stuck-runs" role="alert" data-stuck-count=${list.length}>
    <summary>${list.length} stuck run${list.length === 1 ? '' : 's'}</summary>
    <ul>
      ${list.map(
        (s) =>
          html`<li key=${s.executionId}>
            <a href=${linkTo({ run: s.executionId, wf: s.workflowId })}>${s.workflowId} · ${s.executionId}</a>
            <span class="stuck-reason">${s.status} since ${fmtTime(s.since)}: ${s.reason}</span>
          </li>`,
      )}
    </ul>
  </details>`;
}
