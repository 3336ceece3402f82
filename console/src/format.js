// Small display helpers shared by the views.
export const fmtTime = (ts) => (ts ? new Date(ts).toLocaleString() : '—');
export const fmtClock = (ts) => (ts ? new Date(ts).toLocaleTimeString(undefined, { hour12: false }) + '.' + String(new Date(ts).getMilliseconds()).padStart(3, '0') : '');
export function fmtDuration(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
export const short = (id) => (id && id.length > 13 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id);
export const preview = (v, n = 80) => {
  if (v === undefined) return '';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > n ? `${s.slice(0, n)}…` : s;
};
/** deep equality for JSON values */
export function same(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]));
}
