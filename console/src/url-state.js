// The console's state lives in the query string, so every view is a deep link and survives a reload.
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set();

const readParams = () => Object.fromEntries(new URLSearchParams(location.search));

/** Replaces the query with `params` (empty values dropped); `push` adds a history entry. */
export function navigate(params, { push = true } = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const url = `${location.pathname}${q.toString() ? `?${q}` : ''}`;
  if (url !== `${location.pathname}${location.search}`) history[push ? 'pushState' : 'replaceState'](null, '', url);
  for (const l of listeners) l();
}

/** Merges `changes` into the current query. */
export const patchParams = (changes, opts) => navigate({ ...readParams(), ...changes }, opts);

export const linkTo = (params) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  return `/console${q.toString() ? `?${q}` : ''}`;
};

/** Re-renders on navigation (ours and the browser's back/forward). */
export function useParams() {
  const [params, setParams] = useState(readParams);
  useEffect(() => {
    const update = () => setParams(readParams());
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return params;
}

/** Click handler for in-app links: navigation without a page load. */
export function onLink(e) {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
  const a = e.target.closest?.('a[href^="/console"]');
  if (!a) return;
  e.preventDefault();
  history.pushState(null, '', a.getAttribute('href'));
  for (const l of listeners) l();
}
