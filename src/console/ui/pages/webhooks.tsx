// Webhooks and MQTT subscriptions: create one for a role (its secret shown once), enable or disable it and see why it
// was disabled, send a test event, rotate the secret, read the delivery log with each attempt, replay an event or a
// time range, delete it. Everything through /v1/webhook…
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { del, get, post, put } from '../api.ts';
import { ErrorNote, Notice, Section, Select, TextInput, formatTime, useAction, useLoad } from '../components.tsx';
import type { Role } from '../types.ts';

interface Webhook {
  id: number; roleId: number; kind: 'webhook' | 'mqtt'; name: string; url: string | null; topicPrefix: string | null; types: string[];
  enabled: boolean; disabledAt: string | null; disabledReason: string | null; failures: number; failingSince: string | null; secret?: string;
}
interface Delivery {
  id: number; event: { id: string; type: string; time: string }; state: string; attempts: number; nextAttemptAt: string | null;
  lastStatus: number | null; lastError: string | null;
}
interface Attempt { at: string; durationMs: number; status: number | null; error: string | null; response: string | null }

const typesOf = (text: string) => text.split(',').map((s) => s.trim()).filter(Boolean);

export function Webhooks() {
  const roles = useLoad(() => post<{ role: Role[] }>('/v1/role/query', {}).then((r) => r.role), []);
  const [version, setVersion] = useState(0);
  const list = useLoad(() => post<{ webhook: Webhook[] }>('/v1/webhook/query', {}).then((r) => r.webhook), [version]);
  const [selected, setSelected] = useState<number | undefined>();
  const current = list.data?.find((w) => w.id === selected);
  return (
    <div>
      <div class="page-head"><h1>Webhooks</h1></div>
      <p class="muted">Every change your roles may read, delivered to your systems: signed webhooks (Standard Webhooks) or MQTT topics.</p>
      <CreateWebhook roles={roles.data ?? []} onCreated={() => setVersion((n) => n + 1)} />
      <Section title="Subscriptions">
        <ErrorNote error={list.error} context="Subscriptions" />
        {list.data && (list.data.length === 0 ? <p class="muted">No subscription you may manage.</p> : (
          <table>
            <thead><tr><th>Name</th><th>Role</th><th>Target</th><th>Types</th><th>State</th><th /></tr></thead>
            <tbody>
              {list.data.map((w) => (
                <tr key={w.id}>
                  <td>{w.name}</td>
                  <td>{roles.data?.find((r) => r.id === w.roleId)?.name ?? w.roleId}</td>
                  <td class="mono small">{w.kind === 'mqtt' ? `mqtt: ${w.topicPrefix}/…` : w.url}</td>
                  <td class="small">{w.types.join(', ')}</td>
                  <td>{w.enabled ? (w.failures > 0 ? `failing (${w.failures})` : 'enabled') : <span title={w.disabledReason ?? ''}>disabled</span>}</td>
                  <td><button type="button" onClick={() => setSelected(w.id)} aria-label={`Open ${w.name}`}>Open</button></td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      </Section>
      {current && <WebhookDetail key={current.id} webhook={current} onChanged={() => setVersion((n) => n + 1)} onDeleted={() => { setSelected(undefined); setVersion((n) => n + 1); }} />}
    </div>
  );
}

function CreateWebhook({ roles, onCreated }: { roles: Role[]; onCreated: () => void }) {
  const [roleId, setRoleId] = useState('');
  const [kind, setKind] = useState('webhook');
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [types, setTypes] = useState('*');
  const [secret, setSecret] = useState<string | undefined>();
  const create = useAction(async () => {
    const body = { kind, name, types: typesOf(types), ...(kind === 'webhook' ? { url } : {}) };
    const r = await post<{ webhook: Webhook }>(`/v1/webhook?roleId=${roleId || roles[0]?.id}`, body);
    setSecret(r.webhook.secret);
    onCreated();
  });
  return (
    <Section title="New subscription">
      <form onSubmit={(e) => { e.preventDefault(); void create.run(); }}>
        <div class="grid-form">
          <Select label="Role" value={roleId || String(roles[0]?.id ?? '')} onChange={setRoleId} options={roles.map((r) => [String(r.id), r.name])} hint="It receives what this role may read" />
          <Select label="Kind" value={kind} onChange={setKind} options={[['webhook', 'Webhook'], ['mqtt', 'MQTT']]} />
          <TextInput label="Name" value={name} onInput={setName} required />
          {kind === 'webhook' && <TextInput label="URL" value={url} onInput={setUrl} required placeholder="https://…" />}
          <TextInput label="Event types" value={types} onInput={setTypes} hint="Comma-separated: device.updated, role.*, *" />
        </div>
        <ErrorNote error={create.error} context="Creating the subscription" />
        <div class="row end"><button type="submit" class="primary" disabled={create.busy}>Create</button></div>
      </form>
      {secret && <Notice>Signing secret, shown this once: <code class="secret">{secret}</code></Notice>}
    </Section>
  );
}

function WebhookDetail({ webhook, onChanged, onDeleted }: { webhook: Webhook; onChanged: () => void; onDeleted: () => void }) {
  const [note, setNote] = useState<string | undefined>();
  const [version, setVersion] = useState(0);
  const log = useLoad(() => post<{ deliveries: Delivery[] }>(`/v1/webhook/${webhook.id}/delivery/query`, { limit: 50 }).then((r) => r.deliveries), [webhook.id, version]);
  const [open, setOpen] = useState<number | undefined>();
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const toggle = useAction(async () => {
    await put(`/v1/webhook/${webhook.id}`, { name: webhook.name, ...(webhook.kind === 'webhook' ? { url: webhook.url } : { topicPrefix: webhook.topicPrefix }), types: webhook.types, enabled: !webhook.enabled });
    onChanged();
  });
  const test = useAction(async () => {
    const r = await post<{ eventId: string }>(`/v1/webhook/${webhook.id}/test`);
    setNote(`Test event ${r.eventId} queued.`);
    setVersion((n) => n + 1);
  });
  const rotate = useAction(async () => {
    const r = await post<{ secret: string }>(`/v1/webhook/${webhook.id}/secret`);
    setNote(`New signing secret, shown this once: ${r.secret} (the old one signs too for 24 hours)`);
  });
  const replay = useAction(async (body: Record<string, string>) => {
    const r = await post<{ queued: number }>(`/v1/webhook/${webhook.id}/replay`, body);
    setNote(`${r.queued} event${r.queued === 1 ? '' : 's'} queued again.`);
    setVersion((n) => n + 1);
  });
  const remove = useAction(async () => {
    await del(`/v1/webhook/${webhook.id}`);
    onDeleted();
  });
  return (
    <Section title={`Subscription: ${webhook.name}`} actions={<button type="button" onClick={() => setVersion((n) => n + 1)}>Refresh log</button>}>
      {!webhook.enabled && <p class="warn" role="status">Disabled {formatTime(webhook.disabledAt)}: {webhook.disabledReason}</p>}
      {webhook.enabled && webhook.failures > 0 && <p class="warn" role="status">Failing since {formatTime(webhook.failingSince)} ({webhook.failures} failed attempts).</p>}
      <div class="row">
        <button type="button" onClick={() => void test.run()} disabled={test.busy}>Send a test event</button>
        <button type="button" onClick={() => void toggle.run()} disabled={toggle.busy}>{webhook.enabled ? 'Disable' : 'Enable'}</button>
        {webhook.kind === 'webhook' && <button type="button" onClick={() => void rotate.run()} disabled={rotate.busy}>Rotate secret</button>}
        <button type="button" class="danger" onClick={() => { if (confirm(`Delete ${webhook.name} and its delivery log?`)) void remove.run(); }}>Delete</button>
      </div>
      {note && <Notice>{note}</Notice>}
      {[test, toggle, rotate, replay, remove].map((a, i) => <ErrorNote key={i} error={a.error} />)}
      <h3>Replay a time range</h3>
      <form class="row" onSubmit={(e) => { e.preventDefault(); void replay.run({ from: new Date(from).toISOString(), to: new Date(to).toISOString() }); }}>
        <TextInput label="From" type="datetime-local" value={from} onInput={setFrom} required />
        <TextInput label="To" type="datetime-local" value={to} onInput={setTo} required />
        <button type="submit" disabled={replay.busy}>Replay the range</button>
      </form>
      <h3>Delivery log</h3>
      <ErrorNote error={log.error} context="Delivery log" />
      {log.data && (log.data.length === 0 ? <p class="muted">Nothing delivered yet.</p> : (
        <table>
          <thead><tr><th>Event</th><th>Time</th><th>State</th><th>Attempts</th><th>Last answer</th><th /></tr></thead>
          <tbody>
            {log.data.map((d) => (
              <Fragment key={d.id}>
                <tr>
                  <td><span class="mono small">{d.event.type}</span></td>
                  <td class="small">{formatTime(d.event.time)}</td>
                  <td>{d.state}{d.nextAttemptAt ? ` (next ${formatTime(d.nextAttemptAt)})` : ''}</td>
                  <td>{d.attempts}</td>
                  <td class="small">{d.lastError ?? (d.lastStatus ?? '')}</td>
                  <td class="row">
                    <button type="button" aria-expanded={open === d.id} onClick={() => setOpen(open === d.id ? undefined : d.id)}>Attempts</button>
                    <button type="button" onClick={() => void replay.run({ eventId: d.event.id })}>Replay</button>
                  </td>
                </tr>
                {open === d.id && <tr><td colSpan={6}><Attempts webhookId={webhook.id} deliveryId={d.id} /></td></tr>}
              </Fragment>
            ))}
          </tbody>
        </table>
      ))}
    </Section>
  );
}

function Attempts({ webhookId, deliveryId }: { webhookId: number; deliveryId: number }) {
  const one = useLoad(() => get<{ attempts: Attempt[] }>(`/v1/webhook/${webhookId}/delivery/${deliveryId}`).then((r) => r.attempts), [webhookId, deliveryId]);
  if (one.error) return <ErrorNote error={one.error} context="Attempts" />;
  if (!one.data) return null;
  if (one.data.length === 0) return <p class="muted small">No attempt yet.</p>;
  return (
    <ul class="plain small">
      {one.data.map((a, i) => (
        <li key={i}>{formatTime(a.at)} · {a.durationMs} ms · {a.status ?? 'no answer'}{a.error ? ` · ${a.error}` : ''}{a.response ? <> · <span class="mono">{a.response.slice(0, 120)}</span></> : null}</li>
      ))}
    </ul>
  );
}
