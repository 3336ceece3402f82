// Readable conversation titles. The server names a conversation it opens on an agent's first write
// `New Chat <ISO timestamp>`; the console shows such a conversation (and an untitled one) by its first user message
// when it has read or sent that message, else by its date in the reader's locale. Titles people gave stay as given.
const firstUserText = new Map();

const AUTO_TITLE = /^New Chat (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d))$/;
const BARE_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d)?$/;

const textOf = (m) =>
  typeof m.content === 'string' && m.content
    ? m.content
    : (m.parts ?? [])
        .filter((p) => p.type === 'text')
        .map((p) => p.text)
        .join(' ');

/**
 * Notes the first user message of a conversation from a page of its messages (oldest first). `complete`: the page
 * holds the whole conversation (the server answers the most recent N, so a full page may have lost its start).
 */
export function rememberFirstUserMessage(conversationId, messages, complete) {
  if (!complete) return;
  const first = messages.find((m) => m.role === 'user' && textOf(m).trim());
  if (first) firstUserText.set(conversationId, textOf(first).trim());
}

/** Notes the text a chat sent as the first message of a conversation it opened itself. */
export function rememberOpeningText(conversationId, text) {
  if (!firstUserText.has(conversationId) && text.trim()) firstUserText.set(conversationId, text.trim());
}

const clip = (s, n = 80) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function conversationTitle(c) {
  const title = (c.title ?? '').trim();
  const auto = AUTO_TITLE.exec(title);
  if (title && !auto && !BARE_TIMESTAMP.test(title)) return title;
  const first = firstUserText.get(c.id);
  if (first) return clip(first.replace(/\s+/g, ' '));
  const when = new Date(auto ? auto[1] : BARE_TIMESTAMP.test(title) ? title : c.createdAt);
  return Number.isNaN(when.getTime()) ? 'Chat' : `Chat of ${when.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}`;
}
