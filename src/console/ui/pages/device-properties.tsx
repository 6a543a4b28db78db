// A device's properties: a form driven by the nodeType's JSON Schema beside the raw JSON, saved as a JSON Patch guarded
// by If-Unmodified-Since; a 412 shows what changed meanwhile and lets the user reapply. Nothing typed is lost on a failure.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiFailure, api, get, post } from '../api.ts';
import { Check, ErrorNote, Section, TextInput, formatTime, useAction, useLoad } from '../components.tsx';
import { applyOps, diffProperties, keyOf, rebaseOps, sameJson, type PatchOp } from '../properties.ts';
import type { Device } from '../types.ts';

interface JsonSchema { type?: string | string[]; properties?: Record<string, JsonSchema>; items?: JsonSchema; enum?: unknown[]; const?: unknown; description?: string; minimum?: number }

export const propList = (s: string) => s.split(',').map((x) => x.trim()).filter(Boolean);

export async function loadDevice(id: number): Promise<Device> {
  const r = await post<{ device: Device[] }>('/v1/device/query', { filter: { id: [id] } });
  const d = r.device[0];
  if (!d) throw new ApiFailure(404, { statusCode: 404, error: 'Not Found', message: `device ${id} does not exist or is not visible to you`, code: 'NOT_FOUND' }, new Headers());
  return d;
}

export function PropertiesEditor({ device, onSaved }: { device: Device; onSaved: (d: Device) => void }) {
  const [base, setBase] = useState<Device>(device);
  const [draft, setDraft] = useState<Record<string, unknown>>(device.properties);
  const [raw, setRaw] = useState<string>(JSON.stringify(device.properties, null, 2));
  const [rawError, setRawError] = useState<string | undefined>();
  const [conflict, setConflict] = useState<{ latest: Device; ops: PatchOp[] } | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const nodeType = typeof draft.nodeType === 'string' ? draft.nodeType : undefined;
  const schema = useLoad(async () => {
    if (!nodeType) return undefined;
    try {
      return await get<JsonSchema>(`/v1/device/schema/${encodeURIComponent(nodeType)}`);
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 404) return undefined; // no schema for this nodeType: raw JSON only
      throw err;
    }
  }, [nodeType]);
  const [validate, setValidate] = useState(true);

  const full = base.userRights.monitorManagement;
  const editable = (key: string) => full || base.userRights.propertyEditabilities[key] === true;
  const ops = useMemo(() => diffProperties(base.properties, draft), [base, draft]);

  const setProp = (key: string, value: unknown) => {
    const next = { ...draft };
    if (value === undefined) delete next[key]; else next[key] = value;
    setDraft(next);
    setRaw(JSON.stringify(next, null, 2));
    setRawError(undefined);
    setSaved(undefined);
  };
  const onRaw = (text: string) => {
    setRaw(text);
    setSaved(undefined);
    try {
      const parsed: unknown = JSON.parse(text);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('properties must be a JSON object');
      setDraft(parsed as Record<string, unknown>);
      setRawError(undefined);
    } catch (err) {
      setRawError((err as Error).message);
    }
  };
  const adopt = (d: Device) => {
    setBase(d);
    setDraft(d.properties);
    setRaw(JSON.stringify(d.properties, null, 2));
    setConflict(undefined);
    onSaved(d);
  };

  const send = async (patch: PatchOp[], since: string) => {
    const res = await api<{ device: Device }>('PATCH', `/v1/device/${base.id}`, {
      body: patch, headers: { 'If-Unmodified-Since': since }, query: { validate: validate && schema.data ? true : undefined },
    });
    return res.data.device;
  };
  const save = useAction(async () => {
    try {
      const d = await send(ops, base.lastUpdate);
      adopt(d);
      setSaved(`Saved ${ops.length} change${ops.length === 1 ? '' : 's'} at ${formatTime(d.lastUpdate)}.`);
    } catch (err) {
      // Someone else changed the device since it was loaded: keep the draft, show both versions.
      if (err instanceof ApiFailure && err.status === 412) setConflict({ latest: await loadDevice(base.id), ops });
      throw err;
    }
  });
  const reapply = useAction(async () => {
    if (!conflict) return;
    const patch = rebaseOps(conflict.latest.properties, conflict.ops);
    try {
      const d = await send(patch, conflict.latest.lastUpdate);
      adopt(d);
      save.clear();
      setSaved(`Reapplied ${patch.length} change${patch.length === 1 ? '' : 's'} on the newer version.`);
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 412) setConflict({ latest: await loadDevice(base.id), ops: conflict.ops });
      throw err;
    }
  });

  const schemaProps = schema.data?.properties ?? {};
  // A user with full control sees every key of the schema; others only the properties they may read (the API sends
  // no other), so a schema key they cannot see is not offered as an empty field.
  const keys = [...new Set([...(full ? Object.keys(schemaProps) : []), ...Object.keys(base.properties), ...Object.keys(draft)])];
  const dirty = ops.length > 0;

  return (
    <Section title="Properties" actions={<span class="muted small">last update {formatTime(base.lastUpdate)}</span>}>
      {conflict && <ConflictPanel base={base} conflict={conflict} onReapply={() => void reapply.run()} busy={reapply.busy}
        onDiscard={() => { adopt(conflict.latest); save.clear(); }} />}
      <ErrorNote error={reapply.error} context="Reapplying" />
      <div class="props">
        <form class="prop-form" aria-label="Properties form" onSubmit={(e) => { e.preventDefault(); if (dirty && !rawError) void save.run(); }}>
          {!schema.data && !schema.loading && <p class="muted small">No JSON Schema for this node type: every property is edited as JSON.</p>}
          {keys.map((key) => (
            <PropertyField key={key} name={key} schema={schemaProps[key]} value={draft[key]} readOnly={!editable(key)}
              changed={!sameJson(base.properties[key], draft[key])} onChange={(v) => setProp(key, v)} />
          ))}
          <AddProperty existing={keys} onAdd={(k) => setProp(k, '')} />
        </form>
        <div class="raw">
          <label for="raw-json">Raw JSON</label>
          <textarea id="raw-json" class="mono" spellcheck={false} value={raw} rows={Math.min(30, raw.split('\n').length + 1)}
            aria-invalid={rawError ? true : undefined} aria-describedby={rawError ? 'raw-error' : undefined} onInput={(e) => onRaw((e.target as HTMLTextAreaElement).value)} />
          {rawError && <p id="raw-error" class="error small" role="alert">Invalid JSON: {rawError}</p>}
        </div>
      </div>
      <div class="save-bar">
        {schema.data && <Check label="Validate against the node type's schema" checked={validate} onChange={setValidate} />}
        <span class="muted small" aria-live="polite">{dirty ? `${ops.length} unsaved change${ops.length === 1 ? '' : 's'}: ${ops.map((o) => `${o.op} ${keyOf(o)}`).join(', ')}` : saved ?? 'No unsaved change'}</span>
        <button type="button" disabled={!dirty || save.busy} onClick={() => adopt(base)}>Revert</button>
        <button type="button" class="primary" disabled={!dirty || !!rawError || save.busy} onClick={() => void save.run()}>{save.busy ? 'Saving…' : 'Save changes'}</button>
      </div>
      <ErrorNote error={save.error} context="Saving" />
    </Section>
  );
}

function ConflictPanel({ base, conflict, onReapply, onDiscard, busy }: {
  base: Device; conflict: { latest: Device; ops: PatchOp[] }; onReapply: () => void; onDiscard: () => void; busy: boolean;
}) {
  const theirs = [...new Set([...Object.keys(base.properties), ...Object.keys(conflict.latest.properties)])]
    .filter((k) => !sameJson(base.properties[k], conflict.latest.properties[k]));
  const show = (v: unknown) => (v === undefined ? '(none)' : JSON.stringify(v));
  return (
    <div class="conflict" role="alert" aria-labelledby="conflict-title">
      <h3 id="conflict-title">This device was changed by someone else since you opened it</h3>
      <p>Saved at {formatTime(conflict.latest.lastUpdate)}. Your changes are kept below; nothing was written.</p>
      <table class="grid compact">
        <caption class="sr-only">Changes made meanwhile and your changes</caption>
        <thead><tr><th scope="col">Property</th><th scope="col">When you opened it</th><th scope="col">Now</th><th scope="col">Your change</th></tr></thead>
        <tbody>
          {[...new Set([...theirs, ...conflict.ops.map(keyOf)])].map((k) => {
            const mine = conflict.ops.find((o) => keyOf(o) === k);
            return (
              <tr key={k} class={theirs.includes(k) && mine ? 'clash' : undefined}>
                <th scope="row" class="mono">{k}</th>
                <td class="mono">{show(base.properties[k])}</td>
                <td class="mono">{theirs.includes(k) ? show(conflict.latest.properties[k]) : <span class="muted">unchanged</span>}</td>
                <td class="mono">{mine ? (mine.op === 'remove' ? 'remove' : show(mine.value)) : <span class="muted">—</span>}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <div class="row end">
        <button type="button" onClick={onDiscard}>Discard mine, load theirs</button>
        <button type="button" class="primary" disabled={busy} onClick={onReapply}>Reapply my changes on the new version</button>
      </div>
    </div>
  );
}

function PropertyField({ name, schema, value, readOnly, changed, onChange }: {
  name: string; schema?: JsonSchema; value: unknown; readOnly: boolean; changed: boolean; onChange: (v: unknown) => void;
}) {
  const id = `prop-${name.replace(/[^\w-]/g, '_')}`;
  const type = Array.isArray(schema?.type) ? schema?.type[0] : schema?.type;
  const describe = [schema?.description, readOnly ? 'read-only for you' : undefined].filter(Boolean).join(' · ');
  let input;
  if (schema?.const !== undefined) {
    input = <input id={id} value={String(schema.const)} readOnly />;
  } else if (schema?.enum) {
    input = (
      <select id={id} disabled={readOnly} value={value === undefined ? '' : JSON.stringify(value)} onChange={(e) => { const t = (e.target as HTMLSelectElement).value; onChange(t === '' ? undefined : JSON.parse(t)); }}>
        <option value="">(not set)</option>
        {schema.enum.map((o) => <option key={JSON.stringify(o)} value={JSON.stringify(o)}>{String(o)}</option>)}
      </select>
    );
  } else if (type === 'boolean' || (!schema && typeof value === 'boolean')) {
    input = (
      <select id={id} disabled={readOnly} value={value === undefined ? '' : String(value)} onChange={(e) => { const t = (e.target as HTMLSelectElement).value; onChange(t === '' ? undefined : t === 'true'); }}>
        <option value="">(not set)</option><option value="true">true</option><option value="false">false</option>
      </select>
    );
  } else if (type === 'string' || (!schema && typeof value === 'string')) {
    input = <input id={id} readOnly={readOnly} value={typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value)} onInput={(e) => { const t = (e.target as HTMLInputElement).value; onChange(t === '' && schema ? undefined : t); }} />;
  } else if (type === 'number' || type === 'integer' || (!schema && typeof value === 'number')) {
    input = <input id={id} type="number" readOnly={readOnly} step={type === 'integer' ? 1 : 'any'} value={typeof value === 'number' ? String(value) : ''} onInput={(e) => { const t = (e.target as HTMLInputElement).value; onChange(t === '' ? undefined : Number(t)); }} />;
  } else if (type === 'array' && schema?.items?.type === 'string' && (value === undefined || (Array.isArray(value) && value.every((x) => typeof x === 'string')))) {
    input = <ListInput id={id} value={(value as string[] | undefined) ?? []} readOnly={readOnly} onChange={(list) => onChange(list.length ? list : undefined)} />;
  } else if (type === 'object' && schema?.properties && (value === undefined || (typeof value === 'object' && value !== null && !Array.isArray(value)))
    && Object.values(schema.properties).every((p) => p.type === 'string')) {
    const obj = (value ?? {}) as Record<string, unknown>;
    const subKeys = [...new Set([...Object.keys(schema.properties), ...Object.keys(obj)])];
    return (
      <fieldset class={`prop-group${changed ? ' changed' : ''}`}>
        <legend class="mono">{name}{changed && <span class="dot" aria-label="changed"> ●</span>}</legend>
        {subKeys.map((k) => (
          <div class="field" key={k}>
            <label for={`${id}-${k}`}><span class="mono">{k}</span></label>
            <input id={`${id}-${k}`} readOnly={readOnly} value={typeof obj[k] === 'string' ? obj[k] as string : obj[k] === undefined ? '' : JSON.stringify(obj[k])}
              onInput={(e) => {
                const t = (e.target as HTMLInputElement).value;
                const next = { ...obj };
                if (t === '') delete next[k]; else next[k] = t;
                onChange(Object.keys(next).length ? next : undefined);
              }} />
          </div>
        ))}
        {describe && <small class="hint">{describe}</small>}
      </fieldset>
    );
  } else {
    input = <JsonInput id={id} value={value} readOnly={readOnly} onChange={onChange} />;
  }
  return (
    <div class={`field prop${changed ? ' changed' : ''}`}>
      <label for={id}><span class="mono">{name}</span>{changed && <span class="dot" aria-label="changed"> ●</span>}</label>
      {input}
      {describe && <small class="hint">{describe}</small>}
    </div>
  );
}

/** A list of strings as comma-separated text; the text is kept while typing (a trailing comma does not vanish). */
function ListInput({ id, value, readOnly, onChange }: { id: string; value: string[]; readOnly: boolean; onChange: (v: string[]) => void }) {
  const [text, setText] = useState(value.join(', '));
  useEffect(() => { if (propList(text).join(',') !== value.join(',')) setText(value.join(', ')); }, [value.join(',')]);
  return (
    <input id={id} readOnly={readOnly} value={text} placeholder="comma-separated"
      onInput={(e) => { const t = (e.target as HTMLInputElement).value; setText(t); onChange(propList(t)); }} />
  );
}

/** An object or array property edited as JSON; invalid text stays in the box and is not applied. */
function JsonInput({ id, value, readOnly, onChange }: { id: string; value: unknown; readOnly: boolean; onChange: (v: unknown) => void }) {
  const [text, setText] = useState(value === undefined ? '' : JSON.stringify(value));
  const [bad, setBad] = useState(false);
  useEffect(() => { if (!bad) setText(value === undefined ? '' : JSON.stringify(value)); }, [JSON.stringify(value)]);
  return (
    <input id={id} class="mono" readOnly={readOnly} value={text} aria-invalid={bad || undefined} placeholder="JSON"
      onInput={(e) => {
        const t = (e.target as HTMLInputElement).value;
        setText(t);
        if (t.trim() === '') { setBad(false); onChange(undefined); return; }
        try { onChange(JSON.parse(t)); setBad(false); } catch { setBad(true); }
      }} />
  );
}

function AddProperty({ existing, onAdd }: { existing: string[]; onAdd: (key: string) => void }) {
  const [key, setKey] = useState('');
  const taken = existing.includes(key.trim());
  return (
    <div class="row add-prop">
      <TextInput label="New property" value={key} onInput={setKey} placeholder="name" />
      <button type="button" disabled={!key.trim() || taken} onClick={() => { onAdd(key.trim()); setKey(''); }}>Add property</button>
    </div>
  );
}

