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
/** a policy's period in its largest whole unit: `30 d`, `12 h`, `15 min`, `45 s`, `500 ms` */
export function fmtPeriod(ms) {
  if (ms === undefined || ms === null) return '—';
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1000],
  ]) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  }
  return ms >= 1000 ? fmtDuration(ms) : `${ms} ms`;
}
/** bytes in binary units: `512 B`, `3.4 MiB` */
export function fmtBytes(n) {
  if (n === undefined || n === null) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) ((v /= 1024), i++);
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}
