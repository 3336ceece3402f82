// A collapsible JSON inspector: objects and arrays fold, long strings are shown whole, nothing is evaluated.
import { useState } from 'preact/hooks';
import { html } from './html.js';

function Node({ name, value, depth }) {
  const [open, setOpen] = useState(depth < 2);
  const label = name !== undefined ? html`<span class="j-key">${name}</span>: ` : null;
  if (value === null || typeof value !== 'object') {
    const cls = value === null ? 'j-null' : `j-${typeof value}`;
    const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
    return html`<div class="j-row">${label}<span class=${cls}>${text}</span></div>`;
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const [o, c] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0) return html`<div class="j-row">${label}<span class="j-punct">${o}${c}</span></div>`;
  return html`<div class="j-row">
    <button type="button" class="j-toggle" aria-expanded=${open} onClick=${() => setOpen(!open)}>${open ? '▾' : '▸'}</button>${label}<span class="j-punct">${o}</span>
    ${open ? html`<div class="j-children">${entries.map(([k, v]) => html`<${Node} key=${k} name=${k} value=${v} depth=${depth + 1} />`)}</div>` : html`<span class="j-more">${entries.length} ${Array.isArray(value) ? 'items' : 'keys'}</span>`}
    <span class="j-punct">${c}</span>
  </div>`;
}

export function JsonView({ value, label }) {
  if (value === undefined) return html`<div class="json empty">${label ? `${label}: ` : ''}<em>none</em></div>`;
  return html`<div class="json">${label ? html`<div class="json-label">${label}</div>` : null}<${Node} value=${value} depth=${0} /></div>`;
}
