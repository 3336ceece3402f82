// The console app: a top bar (views, the event store's health, and a sign-in button where the server has auth), the
// view picked from the query string, and a credentials dialog that opens when the server answers 401 (token and
// console key kept in sessionStorage, for this tab only).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { get, setAuthRequiredHandler, setUnauthorizedHandler } from './api.js';
import { credentials } from './credentials.js';
import { linkTo, onLink, patchParams, useParams } from './url-state.js';
import { RunsList } from './runs-list.js';
import { RunView } from './run-view.js';
import { AgentRunView, AgentsView } from './agents.js';
import { StoreHealth } from './store-health.js';
import { usePendingApprovals } from './approvals.js';
import { SchedulesView } from './schedules.js';
import { HistoryView } from './history.js';

function CredentialsDialog({ reason, onClose }) {
  const [token, setToken] = useState(credentials.token);
  const [key, setKey] = useState(credentials.key);
  const save = (e) => {
    e.preventDefault();
    credentials.save(token.trim(), key.trim());
    onClose(true);
  };
  return html`<div class="overlay">
    <form class="dialog credentials" name="credentials" onSubmit=${save} role="dialog" aria-label="Credentials">
      <h3>Sign in to this server</h3>
      ${reason ? html`<p class="error">${reason}</p>` : null}
      <p class="dim">Kept in this tab only (sessionStorage) and sent to this server only.</p>
      <label>Access token (JWT) <input name="token" type="password" autocomplete="off" value=${token} onInput=${(e) => setToken(e.currentTarget.value)} /></label>
      <label>Console access key <input name="key" type="password" autocomplete="off" value=${key} onInput=${(e) => setKey(e.currentTarget.value)} /></label>
      <div class="row"><button type="submit" class="primary">Save</button><button type="button" onClick=${() => onClose(false)}>Close</button></div>
    </form>
  </div>`;
}

function App() {
  const p = useParams();
  const [catalog, setCatalog] = useState(null);
  const [auth, setAuth] = useState(null);
  const [epoch, setEpoch] = useState(0);
  const [err, setErr] = useState('');
  // whether this server wants credentials: JWT auth is on when its OpenAPI document offers a bearer scheme, and any
  // 401 (the console key in production, `defaultPrivate`) says so too; with neither there is nothing to sign in to
  const [authOn, setAuthOn] = useState(null);
  const [storeChecked, setStoreChecked] = useState(false);
  // read in every view, so the Agents link can say that tool calls wait for a person
  const pending = usePendingApprovals(catalog?.agents);
  useEffect(() => {
    setUnauthorizedHandler((reason) => setAuth(reason));
    setAuthRequiredHandler(() => setAuthOn(true));
    get('/doc', { envelope: true, quiet: true }).then(
      (doc) => setAuthOn((on) => on || Boolean(doc?.components?.securitySchemes?.bearerAuth)),
      () => setAuthOn((on) => on ?? false),
    );
  }, []);
  useEffect(() => {
    Promise.all([get('/workflows'), get('/agents')]).then(
      ([workflows, agents]) => setCatalog({ workflows, agents }),
      (e) => setErr(e.message),
    );
  }, [epoch]);
  // a link with only the run id: find its workflow among the newest executions
  useEffect(() => {
    if (!p.run || p.wf) return;
    get('/workflows/executions?limit=500').then(
      (list) => {
        const r = list.find((x) => x.id === p.run);
        if (r) patchParams({ wf: r.workflowId }, { push: false });
        else setErr(`Run ${p.run} not found among the newest 500 executions; add &wf=<workflowId> to the link`);
      },
      (e) => setErr(e.message),
    );
  }, [p.run, p.wf]);
  const view =
    p.run && p.wf ? 'run' : p.agentRun ? 'agent-run' : p.view === 'agents' ? 'agents' : p.view === 'schedules' ? 'schedules' : p.view === 'history' ? 'history' : p.run ? 'resolving' : 'runs';
  let body = html`<p class="empty">${err || 'Loading…'}</p>`;
  if (catalog && view !== 'resolving') {
    if (view === 'run') body = html`<${RunView} key=${p.run} p=${p} />`;
    else if (view === 'agent-run') body = html`<${AgentRunView} p=${p} />`;
    else if (view === 'agents') body = html`<${AgentsView} p=${p} catalog=${catalog} pending=${pending} />`;
    else if (view === 'schedules') body = html`<${SchedulesView} />`;
    else if (view === 'history') body = html`<${HistoryView} catalog=${catalog} />`;
    else body = html`<${RunsList} p=${p} catalog=${catalog} />`;
  }
  const signedIn = Boolean(credentials.token || credentials.key);
  return html`<div
    class="app"
    onClick=${onLink}
    data-view=${view}
    key=${epoch}
    data-auth=${authOn === null ? 'unknown' : authOn ? 'on' : 'off'}
    data-store-checked=${storeChecked ? 'true' : undefined}
  >
    <header class="top">
      <a class="brand" href=${linkTo({})}>eventloom <span>console</span></a>
      <nav>
        <a href=${linkTo({})} class=${view === 'runs' || view === 'run' ? 'active' : ''}>Runs</a
        ><a href=${linkTo({ view: 'agents' })} class=${view === 'agents' ? 'active' : ''}
          >Agents${pending.items.length ? html` <span class="badge" data-pending-approvals title=${`${pending.items.length} tool call${pending.items.length === 1 ? '' : 's'} waiting for approval`}>${pending.items.length}</span>` : null}</a
        ><a href=${linkTo({ view: 'schedules' })} class=${view === 'schedules' ? 'active' : ''}>Schedules</a
        ><a href=${linkTo({ view: 'history' })} class=${view === 'history' ? 'active' : ''}>History</a><a href="/ui" target="_blank" rel="noopener">API explorer</a>
      </nav>
      <${StoreHealth} onChecked=${() => setStoreChecked(true)} />
      ${authOn || signedIn ? html`<button type="button" class="link" name="sign-in" onClick=${() => setAuth('')}>${signedIn ? 'Credentials ✓' : 'Sign in'}</button>` : null}
    </header>
    <main>${body}</main>
    ${auth !== null ? html`<${CredentialsDialog} reason=${auth} onClose=${(saved) => (setAuth(null), saved && setEpoch(epoch + 1))} />` : null}
  </div>`;
}

// the shell's "Loading…" placeholder goes: Preact renders into an empty root
const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
