// Agents: a chat with any agent over /agents/:id/chat (the UI message stream, read as it arrives and followed to the
// newest message; tool calls as cards with arguments and results; memory picked by user and conversation), a
// read-only browser of conversations, messages and working memory, and the detail of one agent run from its history.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { createParser } from 'eventsource-parser';
import { html } from './html.js';
import { enc, get, qs, reportUnauthorized } from './api.js';
import { authHeaders } from './credentials.js';
import { liveSocket } from './live-socket.js';
import { JsonView } from './json-view.js';
import { SpansPanel } from './run-panels.js';
import { linkTo, patchParams } from './url-state.js';
import { fmtDuration, fmtTime } from './format.js';
import { ApprovalsPanel } from './approvals.js';
import { conversationTitle, rememberFirstUserMessage, rememberOpeningText } from './conversation-title.js';

/** the server's default page of messages: a shorter answer holds the whole conversation */
const MESSAGE_PAGE = 100;
const nearBottom = (el) => el.scrollHeight - el.clientHeight - el.scrollTop <= 24;

/** Applies one UI-message-stream chunk to the assistant message being built. */
function applyChunk(msg, c) {
  const parts = msg.parts;
  const tool = (id) => parts.find((p) => p.type === 'tool' && p.toolCallId === id);
  switch (c.type) {
    case 'text-delta': {
      const last = parts[parts.length - 1];
      if (last?.type === 'text' && last.id === c.id) last.text += c.delta;
      else parts.push({ type: 'text', id: c.id, text: c.delta });
      break;
    }
    case 'tool-input-start':
      if (!tool(c.toolCallId)) parts.push({ type: 'tool', toolCallId: c.toolCallId, toolName: c.toolName, state: 'input' });
      break;
    case 'tool-input-available': {
      const t = tool(c.toolCallId) ?? (parts.push({ type: 'tool', toolCallId: c.toolCallId, toolName: c.toolName }), tool(c.toolCallId));
      Object.assign(t, { input: c.input, state: 'called' });
      break;
    }
    case 'tool-output-available':
      if (tool(c.toolCallId)) Object.assign(tool(c.toolCallId), { output: c.output, state: 'done' });
      break;
    case 'tool-approval-request':
      if (tool(c.toolCallId)) Object.assign(tool(c.toolCallId), { state: 'approval', approvalId: c.approvalId });
      break;
    case 'tool-output-denied':
      if (tool(c.toolCallId)) Object.assign(tool(c.toolCallId), { error: 'Denied', state: 'denied' });
      break;
    case 'tool-output-error':
    case 'tool-input-error':
      if (tool(c.toolCallId)) Object.assign(tool(c.toolCallId), { error: c.errorText, state: 'error' });
      break;
    case 'error':
      msg.error = c.errorText;
      break;
    default:
  }
}

/**
 * A stored tool result as the card shows it. Memory keeps the model's tool output (`{type, value}`): a tool that
 * threw is `error-text` / `error-json` (the live stream's `tool-output-error`), a denied call `execution-denied`.
 */
function storedOutcome(output) {
  switch (output?.type) {
    case 'error-text':
    case 'error-json': {
      const v = output.value;
      const error = typeof v === 'string' ? v : typeof v?.message === 'string' ? v.message : JSON.stringify(v);
      return { error, state: 'error' };
    }
    case 'execution-denied':
      return { error: output.reason ? `Denied: ${output.reason}` : 'Denied', state: 'denied' };
    case 'json':
      // the shape the run history gives a tool that threw (`{error: <message>}`), saved as a plain result
      if (isErrorRecord(output.value)) return { error: output.value.error, state: 'error' };
      return { output: output.value, state: 'done' };
    case 'text':
      return { output: output.value, state: 'done' };
    default:
      return isErrorRecord(output) ? { error: output.error, state: 'error' } : { output, state: 'done' };
  }
}

/** `{error: <message>}` and nothing else: how the run history records a tool that threw */
const isErrorRecord = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && typeof v.error === 'string' && Object.keys(v).length === 1;

/** Stored memory messages → chat messages: tool calls become cards, their results fill those cards in. */
function toChatMessages(stored) {
  const out = [];
  const calls = new Map();
  for (const m of stored) {
    if (m.role === 'tool') {
      for (const part of m.parts ?? []) {
        const card = calls.get(part.toolCallId);
        if (card && part.type === 'tool-result') Object.assign(card, storedOutcome(part.output));
      }
      continue;
    }
    const parts = [];
    for (const part of m.parts ?? []) {
      if (part.type === 'text') parts.push({ type: 'text', text: part.text });
      else if (part.type === 'tool-call') {
        const card = { type: 'tool', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, state: 'called' };
        calls.set(part.toolCallId, card);
        parts.push(card);
      }
    }
    if (parts.length === 0 && m.content) parts.push({ type: 'text', text: m.content });
    const last = out[out.length - 1];
    // one assistant turn may be stored as several messages (tool step, then the answer)
    if (last && last.role === m.role && m.role === 'assistant') last.parts.push(...parts);
    else out.push({ id: m.id, role: m.role, parts, done: true });
  }
  return out;
}

const TOOL_STATE_LABEL = { done: 'result', error: 'failed', denied: 'denied', approval: 'waiting for approval' };

function ToolCard({ part }) {
  return html`<div class=${`tool-card tool-${part.state}`} data-tool-call-id=${part.toolCallId} data-tool-name=${part.toolName}>
    <div class="tool-head"><span class="dim">tool</span> <strong>${part.toolName}</strong> <span class="dim" data-tool-state>${TOOL_STATE_LABEL[part.state] ?? 'calling…'}</span></div>
    <${JsonView} label="Arguments" value=${part.input} />
    ${part.state === 'done' ? html`<${JsonView} label="Result" value=${part.output} />` : null} ${part.error ? html`<div class="error">${part.error}</div>` : null}
  </div>`;
}

function Chat({ agent, p, onReplied }) {
  const [messages, setMessages] = useState([]);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const abort = useRef(null);
  const own = useRef('');
  const box = useRef(null);
  // following the newest message: on until the reader scrolls up, on again once they are back at the bottom or send
  const follow = useRef({ pinned: true, top: 0 });
  const userId = p.user ?? '';
  const conversationId = p.conv ?? '';
  useLayoutEffect(() => {
    const el = box.current;
    const f = follow.current;
    if (!el) return;
    // scrolled up since the last follow (its scroll event may not have been dispatched yet): leave the view be
    if (el.scrollTop < f.top - 2 && !nearBottom(el)) f.pinned = false;
    if (!f.pinned) return;
    el.scrollTop = el.scrollHeight;
    f.top = el.scrollTop;
  }, [messages]);
  const onScroll = (e) => {
    const el = e.currentTarget;
    const f = follow.current;
    if (nearBottom(el)) Object.assign(f, { pinned: true, top: el.scrollTop });
    else if (el.scrollTop < f.top - 2) f.pinned = false;
  };
  useEffect(() => {
    // a conversation this chat started keeps its messages; picking another one continues it from memory
    if (conversationId && conversationId === own.current) return;
    follow.current = { pinned: true, top: 0 };
    setMessages([]);
    if (!conversationId || !userId || !agent.memory) return;
    let live = true;
    get(`/api/memory/conversations${qs({ agentId: agent.id, userId, limit: 500 })}`)
      .then((l) => (l.conversations.some((c) => c.id === conversationId) ? get(`/api/memory/conversations/${enc(conversationId)}/messages${qs({ agentId: agent.id, userId })}`) : undefined))
      .then((r) => {
        if (!live || !r) return;
        rememberFirstUserMessage(conversationId, r.messages, r.messages.length < MESSAGE_PAGE);
        setMessages(toChatMessages(r.messages));
      })
      .catch(() => {});
    return () => (live = false);
  }, [agent.id, conversationId]);

  const send = async (e) => {
    e.preventDefault();
    if (!text.trim() || busy) return;
    const user = { role: 'user', parts: [{ type: 'text', text }] };
    const assistant = { role: 'assistant', parts: [] };
    const history = [...messages, user];
    follow.current.pinned = true;
    setMessages([...history, assistant]);
    setText('');
    setBusy(true);
    // the server would open a new conversation per call without an id: pick one, so the chat continues it
    let conv = conversationId;
    if (userId && !conv) {
      conv = own.current = crypto.randomUUID();
      patchParams({ conv }, { push: false });
    }
    if (conv && conv === own.current && messages.length === 0) rememberOpeningText(conv, text);
    const options = userId ? { memory: { userId, conversationId: conv } } : {};
    // with memory the server holds the history; without it the client sends the conversation so far
    const input = userId
      ? user.parts[0].text
      : history.map((m) => ({ role: m.role, parts: m.parts.filter((x) => x.type === 'text').map((x) => ({ type: 'text', text: x.text })) })).filter((m) => m.parts.length);
    abort.current = new AbortController();
    try {
      const res = await fetch(`/agents/${enc(agent.id)}/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...authHeaders() },
        body: JSON.stringify({ input, options }),
        signal: abort.current.signal,
      });
      if (!res.ok) {
        const body = await res.json().catch(() => ({}));
        assistant.error = body.error ?? `${res.status}`;
        if (res.status === 401) reportUnauthorized(assistant.error);
      } else {
        const parser = createParser({
          onEvent: (m) => {
            if (m.data === '[DONE]') return;
            try {
              applyChunk(assistant, JSON.parse(m.data));
            } catch {
              return;
            }
            setMessages([...history, { ...assistant, parts: assistant.parts.map((x) => ({ ...x })) }]);
          },
        });
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(value);
        }
      }
    } catch (err) {
      if (err.name !== 'AbortError') assistant.error = err.message;
    }
    setMessages([...history, { ...assistant, parts: assistant.parts.map((x) => ({ ...x })), done: true }]);
    setBusy(false);
    onReplied?.();
  };

  return html`<div class="chat panel">
    <form class="memory-pick" onSubmit=${(e) => e.preventDefault()}>
      <label>User <input name="user" value=${userId} placeholder="no memory" onChange=${(e) => patchParams({ user: e.currentTarget.value }, { push: false })} /></label>
      <label
        >Conversation
        <input
          name="conv"
          value=${conversationId}
          placeholder=${userId ? 'new conversation' : '—'}
          disabled=${!userId}
          onChange=${(e) => patchParams({ conv: e.currentTarget.value }, { push: false })}
      /></label>
      ${agent.memory ? null : html`<span class="dim">this agent has no memory</span>`}
    </form>
    <div class="messages" aria-live="polite" ref=${box} onScroll=${onScroll}>
      ${messages.map(
        (m, i) =>
          html`<div class=${`msg msg-${m.role}`} key=${i} data-role=${m.role} data-done=${m.done ? 'true' : undefined}>
            ${m.parts.map((part, j) => (part.type === 'tool' ? html`<${ToolCard} key=${j} part=${part} />` : html`<div class="msg-text" key=${j}>${part.text}</div>`))}
            ${m.error ? html`<div class="error" role="alert">${m.error}</div>` : null}
          </div>`,
      )}
    </div>
    <form class="composer" onSubmit=${send}>
      <input name="message" placeholder=${`Message ${agent.name}`} value=${text} onInput=${(e) => setText(e.currentTarget.value)} autocomplete="off" />
      <button type="submit" class="primary" disabled=${busy}>Send</button>
      ${busy ? html`<button type="button" onClick=${() => abort.current?.abort()}>Stop</button>` : null}
    </form>
  </div>`;
}

/**
 * Working memory of the picked conversation, read when the reader asks for it. The contract answers 404 for a
 * conversation without one, and nothing tells the console beforehand which conversations have one (it is written
 * through the API, not by the model), so it is not asked for unprompted; an agent without working memory is never
 * asked at all. Keyed by conversation: another conversation starts closed.
 */
function WorkingMemory({ agent, userId, conversationId, version }) {
  const config = agent.memory?.workingMemory ?? agent.memory?.config?.workingMemory ?? null;
  const [open, setOpen] = useState(false);
  const [wm, setWm] = useState(undefined);
  const [err, setErr] = useState('');
  useEffect(() => {
    if (!open) return;
    let live = true;
    get(`/api/memory/conversations/${enc(conversationId)}/working-memory${qs({ agentId: agent.id, userId })}`).then(
      (r) => live && setWm(r),
      (e) => live && (e.status === 404 ? setWm(null) : setErr(e.message)),
    );
    return () => (live = false);
  }, [open, agent.id, conversationId, version]);
  if (!config) return html`<p class="dim working-memory-off">Working memory is off for ${agent.name}.</p>`;
  if (!open) return html`<div class="working-memory"><button type="button" name="working-memory" onClick=${() => setOpen(true)}>Show working memory (${config.scope} scope)</button></div>`;
  return html`<div class="working-memory">
    ${err ? html`<p class="error">${err}</p>` : null}
    ${
      wm
        ? html`<div class="json-label">Working memory (${wm.scope}, ${wm.format})</div>
            <pre class="mono">${wm.content}</pre>`
        : wm === null
          ? html`<p class="dim">No working memory for this conversation yet.</p>`
          : err
            ? null
            : html`<p class="empty">Loading…</p>`
    }
  </div>`;
}

function MemoryBrowser({ agent, p, version }) {
  const [list, setList] = useState(null);
  const [conv, setConv] = useState(null);
  const [err, setErr] = useState('');
  const userId = p.user ?? '';
  useEffect(() => {
    if (!agent.memory) return;
    get(`/api/memory/conversations${qs({ agentId: agent.id, userId, limit: 100 })}`).then(setList, (e) => setErr(e.message));
  }, [agent.id, userId, p.conv, version]);
  const known = Boolean(list?.conversations.some((c) => c.id === p.conv));
  useEffect(() => {
    setConv(null);
    // a conversation the chat has just named exists once its first message is saved
    if (!agent.memory || !p.conv || !known) return;
    get(`/api/memory/conversations/${enc(p.conv)}/messages${qs({ agentId: agent.id, userId })}`).then(
      (r) => {
        rememberFirstUserMessage(p.conv, r.messages, r.messages.length < MESSAGE_PAGE);
        setConv(r);
      },
      (e) => setErr(e.message),
    );
  }, [agent.id, p.conv, version, known]);
  if (!agent.memory)
    return html`<div class="panel memory">
      <div class="panel-head">Memory</div>
      <p class="empty">${agent.name} has no memory configured.</p>
    </div>`;
  return html`<div class="panel memory">
    <div class="panel-head">Memory <span class="dim">(read only)</span></div>
    ${err ? html`<p class="error">${err}</p>` : null}
    <ul class="conversations">
      ${(list?.conversations ?? []).map(
        (c) =>
          html`<li key=${c.id} data-conversation-id=${c.id} class=${p.conv === c.id ? 'selected' : ''}>
            <a href=${linkTo({ ...p, conv: c.id, user: c.userId })} title=${c.title || c.id}>${conversationTitle(c)}</a> <span class="dim">${c.userId} · ${fmtTime(c.updatedAt)}</span>
          </li>`,
      )}
      ${list && list.conversations.length === 0 ? html`<li class="empty">No conversations${userId ? ` for ${userId}` : ''}.</li>` : null}
    </ul>
    ${
      conv
        ? html`<div class="conv-messages">
            ${conv.messages.map(
              (m) =>
                html`<div class=${`msg msg-${m.role}`} key=${m.id} data-message-id=${m.id}>
                  <span class="role" data-role-label>${m.role}</span> ${(m.parts ?? []).map((part, j) =>
                    part.type === 'text'
                      ? html`<span key=${j}>${part.text}</span>`
                      : html`<div class=${`tool-card${part.type === 'tool-result' && storedOutcome(part.output).state !== 'done' ? ` tool-${storedOutcome(part.output).state}` : ''}`} key=${j}>
                          <div class="tool-head"><span class="dim">${part.type}</span> <strong>${part.toolName ?? ''}</strong></div>
                          <${JsonView} value=${part.input ?? part.output ?? part} />
                        </div>`,
                  )}
                </div>`,
            )}
          </div>`
        : null
    }
    ${p.conv && known ? html`<${WorkingMemory} key=${`${agent.id}/${p.conv}`} agent=${agent} userId=${userId} conversationId=${p.conv} version=${version} />` : null}
  </div>`;
}

export function AgentsView({ p, catalog, pending }) {
  const [memVersion, setMemVersion] = useState(0);
  const agent = catalog.agents.find((a) => a.id === p.agent) ?? catalog.agents[0];
  if (!agent) return html`<section class="agents"><p class="empty">No agents are registered on this server.</p></section>`;
  return html`<section class="agents">
    <header class="bar">
      <h2>Agents</h2>
      <select name="agent" value=${agent.id} onChange=${(e) => patchParams({ agent: e.currentTarget.value, conv: '' })}>
        ${catalog.agents.map((a) => html`<option value=${a.id}>${a.name}</option>`)}
      </select>
      <span class="dim">${agent.model} · ${agent.tools.length} tools</span>
    </header>
    <${ApprovalsPanel} pending=${pending} />
    <div class="agents-main"><${Chat} agent=${agent} p=${p} onReplied=${() => setMemVersion((v) => v + 1)} /><${MemoryBrowser} agent=${agent} p=${p} version=${memVersion} /></div>
  </section>`;
}

export function AgentRunView({ p }) {
  const [entry, setEntry] = useState(undefined);
  const [err, setErr] = useState('');
  const [pushes, setPushes] = useState(0);
  // while the run is in flight, every span event of this agent re-reads its history entry
  const working = entry?.status === 'working';
  useEffect(() => {
    if (!working) return;
    let timer;
    const sock = liveSocket(
      '/ws/observability',
      { entityType: 'agent', entityId: p.agent },
      (msg) => {
        if (msg.type !== 'OBSERVABILITY_EVENT') return;
        clearTimeout(timer);
        timer = setTimeout(() => setPushes((n) => n + 1), 100);
      },
      // once the feed is live (and after each reconnection) read the run again: it may have ended
      // between the first read and the subscription, and then no event would come
      { console: true, onState: (state) => state === 'live' && setPushes((n) => n + 1) },
    );
    return () => {
      clearTimeout(timer);
      sock.close();
    };
  }, [working, p.agent]);
  // one read of the run; a run that is not there (or that retention removed) is a 404 whose message says so
  useEffect(() => {
    get(`/agents/${enc(p.agent)}/runs/${enc(p.agentRun)}`).then(
      (found) => (setEntry(found), setErr('')),
      (e) => (e.status === 404 ? (setEntry(null), setErr(e.message)) : setErr(e.message)),
    );
  }, [p.agent, p.agentRun, pushes]);
  return html`<section class="agent-run" data-execution-id=${p.agentRun}>
    <header class="bar">
      <a href=${linkTo({})} class="back">← Runs</a>
      <h2>${p.agent} <span class="mono dim">${p.agentRun}</span></h2>
      ${entry ? html`<span class=${`status status-${entry.status}`} data-run-status=${entry.status}>${entry.status}</span>` : null}
    </header>
    ${entry === null ? html`<p class="empty" data-run-missing>${err || "This run is not in the agent's history."}</p>` : err ? html`<p class="error">${err}</p>` : null}
    ${
      entry
        ? html`<div class="run-meta">
              <span>${entry.operationType}</span
              ><span>Started ${fmtTime(entry.startTime)}</span
              >${entry.endTime ? html`<span>took ${fmtDuration(Date.parse(entry.endTime) - Date.parse(entry.startTime))}</span>` : null}${entry.usage ? html`<span>${entry.usage.totalTokens} tokens</span>` : null}${entry.conversationId ? html`<a href=${linkTo({ view: 'agents', agent: p.agent, user: entry.userId, conv: entry.conversationId })}>conversation</a>` : null}
            </div>
            <div class="io"><${JsonView} label="Input" value=${entry.input} /><${JsonView} label="Output" value=${entry.output} /></div>
            <div class="panel">
              <div class="panel-head">Steps</div>
              ${entry.steps.map((s, i) =>
                s.type === 'text'
                  ? html`<div class="msg-text" key=${i}>${typeof s.content === 'string' ? s.content : JSON.stringify(s.content)}</div>`
                  : html`<div class=${`tool-card${s.type === 'tool_result' && isErrorRecord(s.content) ? ' tool-error' : ''}`} key=${i}>
                      <div class="tool-head">
                        ${s.type === 'tool_call' ? 'tool call' : s.type === 'tool_result' && isErrorRecord(s.content) ? 'tool failed' : 'tool result'} <strong>${s.name}</strong>
                      </div>
                      <${JsonView} value=${s.arguments ?? s.content} />
                    </div>`,
              )}
            </div>
            <${SpansPanel} entityType="agent" entityId=${p.agent} runId=${p.agentRun} version=${entry.status} />`
        : null
    }
  </section>`;
}
