// A device's monitors relations: who reads and edits what; grant, change and remove them (needs monitorManagement).
import { useState } from 'preact/hooks';
import { del, post, put } from '../api.ts';
import { Check, Dialog, ErrorNote, Link, Section, Select, TextInput, useAction, useLoad } from '../components.tsx';
import { navigate } from '../router.ts';
import type { DeletionInfo, Monitors, Role } from '../types.ts';
import { propList } from './device-properties.tsx';

/** The device's monitors relations: who sees and edits what; grant, change and remove them (needs monitorManagement). */
export function MonitorsSection({ deviceId, manage }: { deviceId: number; manage: boolean }) {
  const data = useLoad(async () => {
    const [m, r] = await Promise.all([
      post<{ monitors: Monitors[] }>('/v1/role/*/monitors/query', { filter: { deviceId: [deviceId] } }),
      post<{ role: Role[] }>('/v1/role/query', {}),
    ]);
    return { monitors: m.monitors, names: new Map(r.role.map((x) => [x.id, x.name])) };
  }, [deviceId]);
  const [editing, setEditing] = useState<Monitors | 'new' | undefined>();
  const [confirming, setConfirming] = useState<Monitors | undefined>();
  const remove = useAction(async (m: Monitors) => {
    const info = await del<DeletionInfo>(`/v1/role/${m.roleId}/monitors/${m.id}`);
    setConfirming(undefined);
    if (info.deletedNodeIds.includes(deviceId)) navigate('/devices');
    else data.reload();
  });
  // Removing the last relation with monitorManagement deletes the device itself (docs/api.md#monitors): ask first.
  const lastManager = (m: Monitors) => m.monitorManagement && (data.data?.monitors ?? []).filter((x) => x.monitorManagement).length === 1;
  const name = (id: number) => data.data?.names.get(id) ?? `role ${id}`;
  return (
    <Section title="Monitored by" actions={manage && <button type="button" onClick={() => setEditing('new')}>Share with a role</button>}>
      <ErrorNote error={data.error} context="Monitors" />
      {data.data && (data.data.monitors.length === 0 ? <p class="muted">No monitors relation visible to you.</p> : (
        <ul class="plain">
          {data.data.monitors.map((m) => (
            <li key={m.id} class="row between">
              <span>
                <Link href={`/roles/${m.roleId}`}>{name(m.roleId)}</Link>{' '}
                {m.monitorManagement ? <span class="badge ok">monitorManagement</span>
                  : <span class="muted small">reads {m.reads.join(', ') || '—'} · edits {m.edits.join(', ') || '—'}</span>}
              </span>
              {manage && (
                <span class="actions">
                  <button type="button" class="small" aria-label={`Change the access of ${name(m.roleId)}`} onClick={() => setEditing(m)}>Change</button>
                  <button type="button" class="small danger" aria-label={`Remove the access of ${name(m.roleId)}`} onClick={() => (lastManager(m) ? setConfirming(m) : void remove.run(m))}>Remove</button>
                </span>
              )}
            </li>
          ))}
        </ul>
      ))}
      <ErrorNote error={remove.error} context="Removing the relation" />
      <Dialog open={confirming !== undefined} title="Delete this device?" onClose={() => setConfirming(undefined)}>
        <p>This is the last relation that manages the device. Removing it deletes device #{deviceId}, its other monitors
          relations and its license links (those licenses can be claimed again). Its telemetry stays stored.</p>
        <ErrorNote error={remove.error} context="Deleting" />
        <div class="row end">
          <button type="button" onClick={() => setConfirming(undefined)}>Cancel</button>
          <button type="button" class="danger" disabled={remove.busy} onClick={() => void remove.run(confirming!)}>Delete the device</button>
        </div>
      </Dialog>
      <Dialog open={editing !== undefined} title={editing === 'new' ? 'Share this device with a role' : 'Change the access of a role'} onClose={() => setEditing(undefined)}>
        {editing && <MonitorsForm deviceId={deviceId} current={editing === 'new' ? undefined : editing}
          onDone={() => { setEditing(undefined); data.reload(); }} onCancel={() => setEditing(undefined)} />}
      </Dialog>
    </Section>
  );
}

function MonitorsForm({ deviceId, current, onDone, onCancel }: {
  deviceId: number; current?: Monitors; onDone: () => void; onCancel: () => void;
}) {
  // loaded when the dialog opens: a role created meanwhile is offered too
  const loaded = useLoad(() => post<{ role: Role[] }>('/v1/role/query', { userRights: { deviceManagement: true, roleManagement: true } }), []);
  const roles = loaded.data?.role ?? [];
  const usable = roles.filter((r) => r.userRights.deviceManagement || r.userRights.roleManagement || r.id === current?.roleId);
  const [chosen, setRoleId] = useState('');
  const roleId = chosen || String(current?.roleId ?? usable[0]?.id ?? '');
  const [full, setFull] = useState(current?.monitorManagement ?? false);
  const [reads, setReads] = useState((current?.reads ?? []).join(', '));
  const [edits, setEdits] = useState((current?.edits ?? []).join(', '));
  const save = useAction(async () => {
    const body = { monitorManagement: full, reads: propList(reads), edits: propList(edits) };
    if (current) await put(`/v1/role/${current.roleId}/monitors/${current.id}`, body);
    else await put(`/v1/role/${roleId}/monitors`, body, { query: { deviceId } });
    onDone();
  });
  return (
    <form onSubmit={(e) => { e.preventDefault(); void save.run(); }}>
      <ErrorNote error={loaded.error} context="Roles" />
      {current ? <p>Role <strong>{roles.find((r) => r.id === current.roleId)?.name ?? current.roleId}</strong></p>
        : <Select label="Role" value={roleId} onChange={setRoleId} options={usable.map((r): [string, string] => [String(r.id), `${r.name} (#${r.id})`])} />}
      <Check label="Full control (monitorManagement: every property, sharing, deletion)" checked={full} onChange={setFull} />
      <TextInput label="Properties it may read" value={reads} onInput={setReads} hint="Comma-separated top-level names, e.g. name, nodeId" />
      <TextInput label="Properties it may edit" value={edits} onInput={setEdits} hint="Editable properties are readable too." />
      <ErrorNote error={save.error} context="Saving the access" />
      <div class="row end">
        <button type="button" onClick={onCancel}>Cancel</button>
        <button type="submit" class="primary" disabled={save.busy || !roleId}>Save access</button>
      </div>
    </form>
  );
}

