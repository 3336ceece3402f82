// The Schedules view: the config's cron schedules with their state (`GET /schedules`), read again every few seconds
// and after each action, with Pause / Resume and Run now (`POST /schedules/:id/trigger`), whose new run is linked.
import { useCallback, useState } from 'preact/hooks';
import { usePolling } from './polling.js';
import { html } from './html.js';
import { enc, get, post } from './api.js';
import { fmtTime, short } from './format.js';
import { linkTo } from './url-state.js';

/** a schedule's next tick moves every tick; a short poll keeps the list current without a feed of its own */
const POLL_MS = 3000;

function ScheduleRow({ s, onChanged }) {
  const [busy, setBusy] = useState('');
  const [note, setNote] = useState(null);
  const act = async (action) => {
    setBusy(action);
    setNote(null);
    try {
      const data = await post(`/schedules/${enc(s.id)}/${action}`);
      if (action === 'trigger') setNote({ executionId: data.executionId });
      onChanged();
    } catch (e) {
      setNote({ error: e.message });
    } finally {
      setBusy('');
    }
  };
  const last = s.lastExecutionId;
  return html`<tr class="schedule-row" data-schedule-id=${s.id} data-paused=${String(s.paused)}>
    <td><strong>${s.id}</strong></td>
    <td>${s.workflow}</td>
    <td class="mono">${s.cron}${s.timezone !== 'UTC' ? html` <span class="dim">(${s.timezone})</span>` : null}</td>
    <td><span class=${`status status-${s.paused ? 'suspended' : 'running'}`} data-state>${s.paused ? 'paused' : 'active'}</span></td>
    <td data-next-run>${s.paused ? '—' : fmtTime(s.nextRunAt)}</td>
    <td data-last-run>${last ? html`<a href=${linkTo({ run: last, wf: s.workflow })} title=${last}>${short(last)}</a> <span class="dim">${fmtTime(s.lastRunAt)}</span>` : '—'}</td>
    <td>
      <div class="row">
        ${
          s.paused
            ? html`<button type="button" name="resume" disabled=${Boolean(busy)} onClick=${() => act('resume')}>Resume</button>`
            : html`<button type="button" name="pause" disabled=${Boolean(busy)} onClick=${() => act('pause')}>Pause</button>`
        }
        <button type="button" name="trigger" class="primary" disabled=${Boolean(busy)} onClick=${() => act('trigger')}>${busy === 'trigger' ? 'Starting…' : 'Run now'}</button>
      </div>
      ${note?.executionId ? html`<p class="dim" data-triggered>Started <a href=${linkTo({ run: note.executionId, wf: s.workflow })}>${short(note.executionId)}</a></p>` : null}
      ${note?.error ? html`<p class="error" role="alert">${note.error}</p>` : null}
    </td>
  </tr>`;
}

export function SchedulesView() {
  const [list, setList] = useState(null);
  const [err, setErr] = useState('');
  const refresh = useCallback(
    () =>
      get('/schedules', { quiet: true }).then(
        (l) => (setList(l), setErr('')),
        (e) => setErr(e.message),
      ),
    [],
  );
  usePolling(refresh, POLL_MS);
  return html`<section class="schedules">
    <header class="bar"><h2>Schedules</h2></header>
    ${err ? html`<p class="error" role="alert">${err}</p>` : null}
    <table class="schedules-table">
      <thead>
        <tr>
          <th>Schedule</th>
          <th>Workflow</th>
          <th>Cron</th>
          <th>State</th>
          <th>Next run</th>
          <th>Last run</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        ${(list ?? []).map((s) => html`<${ScheduleRow} key=${s.id} s=${s} onChanged=${refresh} />`)}
        ${
          list && list.length === 0
            ? html`<tr>
                <td colspan="7" class="empty">No schedules in the config.</td>
              </tr>`
            : null
        }
        ${
          list === null && !err
            ? html`<tr>
                <td colspan="7" class="empty">Loading…</td>
              </tr>`
            : null
        }
      </tbody>
    </table>
  </section>`;
}
