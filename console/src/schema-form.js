// A form generated from a JSON Schema object (the step's resume schema): booleans become checkboxes, numbers
// number fields, enums selects, strings text fields, anything nested a JSON field. Validation is the server's:
// its `<path>: <message>` issues are shown next to the matching field, the rest above the form. A raw JSON
// mode covers schemas the form cannot express.
import { useState } from 'preact/hooks';
import { html } from './html.js';

const kindOf = (s) => {
  const t = Array.isArray(s?.type) ? s.type.find((x) => x !== 'null') : s?.type;
  if (s?.enum) return 'enum';
  if (t === 'boolean') return 'boolean';
  if (t === 'number' || t === 'integer') return 'number';
  if (t === 'string') return 'string';
  return 'json';
};

/** `Resume data validation failed: a: msg; b.c: msg` → {a: msg, 'b.c': msg, '': rest} */
function issuesByField(message) {
  const out = {};
  const body = String(message ?? '').replace(/^[^:]*failed:\s*/i, '');
  for (const part of body.split(/;\s*/)) {
    const m = /^([\w.$[\]-]+|\(root\)):\s*(.*)$/.exec(part);
    if (m && m[1] !== '(root)') out[m[1].split('.')[0]] = (out[m[1].split('.')[0]] ? `${out[m[1].split('.')[0]]}; ` : '') + m[2];
    else out[''] = (out[''] ? `${out['']}; ` : '') + part;
  }
  return out;
}

function fieldValue(kind, raw) {
  if (kind === 'boolean') return raw;
  if (kind === 'number') return raw === '' ? undefined : Number(raw);
  if (kind === 'json') {
    if (raw === '') return undefined;
    return JSON.parse(raw);
  }
  return raw === '' ? undefined : raw;
}

export function SchemaForm({ schema, initial, submitLabel, onSubmit, name = 'schema-form' }) {
  const props = schema?.type === 'object' || schema?.properties ? (schema.properties ?? {}) : null;
  const [raw, setRaw] = useState(!props);
  const [values, setValues] = useState(() => {
    const v = {};
    for (const [k, s] of Object.entries(props ?? {})) {
      const kind = kindOf(s);
      const init = initial?.[k];
      v[k] = kind === 'boolean' ? Boolean(init ?? s.default ?? false) : init === undefined ? '' : kind === 'json' ? JSON.stringify(init) : String(init);
    }
    return v;
  });
  const [text, setText] = useState(() => JSON.stringify(initial ?? {}, null, 2));
  const [errors, setErrors] = useState({});
  const [busy, setBusy] = useState(false);

  const submit = async (e) => {
    e.preventDefault();
    let data;
    try {
      if (raw) data = text.trim() === '' ? undefined : JSON.parse(text);
      else {
        data = {};
        for (const [k, s] of Object.entries(props)) {
          const v = fieldValue(kindOf(s), values[k]);
          if (v !== undefined) data[k] = v;
        }
      }
    } catch (err) {
      setErrors({ '': `Not valid JSON: ${err.message}` });
      return;
    }
    setBusy(true);
    const result = await onSubmit(data);
    setBusy(false);
    setErrors(result?.error ? (raw ? { '': result.error } : issuesByField(result.error)) : {});
  };

  const required = new Set(schema?.required ?? []);
  const field = ([k, s]) => {
    const kind = kindOf(s);
    const set = (v) => setValues({ ...values, [k]: v });
    const id = `${name}-${k}`;
    let input;
    if (kind === 'boolean') input = html`<input id=${id} name=${k} type="checkbox" checked=${values[k]} onChange=${(e) => set(e.currentTarget.checked)} />`;
    else if (kind === 'enum')
      input = html`<select id=${id} name=${k} value=${values[k]} onChange=${(e) => set(e.currentTarget.value)}>
        <option value=""></option>
        ${s.enum.map((o) => html`<option value=${o}>${String(o)}</option>`)}
      </select>`;
    else if (kind === 'number') input = html`<input id=${id} name=${k} type="number" step="any" value=${values[k]} onInput=${(e) => set(e.currentTarget.value)} />`;
    else if (kind === 'string') input = html`<input id=${id} name=${k} type="text" value=${values[k]} onInput=${(e) => set(e.currentTarget.value)} />`;
    else input = html`<textarea id=${id} name=${k} rows="3" class="mono" placeholder="JSON" value=${values[k]} onInput=${(e) => set(e.currentTarget.value)}></textarea>`;
    return html`<div class=${`field ${errors[k] ? 'invalid' : ''}`} data-field=${k}>
      <label for=${id}>${s.title ?? k}${required.has(k) ? html`<span class="req" title="required">*</span>` : null}</label>
      ${input} ${s.description ? html`<small>${s.description}</small>` : null} ${errors[k] ? html`<div class="field-error" role="alert">${errors[k]}</div>` : null}
    </div>`;
  };
  return html`<form class="schema-form" name=${name} onSubmit=${submit} novalidate>
    ${
      props
        ? html`<div class="mode">
            <label><input type="checkbox" name="raw-json" checked=${raw} onChange=${(e) => setRaw(e.currentTarget.checked)} /> Raw JSON</label>
          </div>`
        : null
    }
    ${errors[''] ? html`<div class="form-error" role="alert">${errors['']}</div>` : null}
    ${raw ? html`<textarea name="raw" class="mono" rows="6" value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>` : Object.entries(props).map(field)}
    <button type="submit" class="primary" disabled=${busy}>${busy ? 'Sending…' : submitLabel}</button>
  </form>`;
}
