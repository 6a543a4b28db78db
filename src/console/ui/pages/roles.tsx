// Roles as a tree following the manages relations (a role with several parents appears under each), the selected
// role's details: rename and rights, child roles, members, the relation flags, deletion with a preview, explain.
import { useMemo, useState } from 'preact/hooks';
import { del, get, post, put } from '../api.ts';
import {
  Dialog, ErrorNote, FlagChips, FlagsEditor, Link, Loading, Notice, RIGHTS, RIGHT_LABELS, Section, Select, TextInput,
  noFlags, useAction, useLoad, type Flags, type Right,
} from '../components.tsx';
import { navigate } from '../router.ts';
import type { DeletionInfo, Explain, Manages, Member, Monitors, Role } from '../types.ts';

const ALL_RIGHTS = Object.fromEntries(RIGHTS.map((r) => [r, true]));
const flagsOf = (m: Manages): Flags => Object.fromEntries(RIGHTS.map((r) => [r, m[r]])) as Flags;

interface Graph { roles: Map<number, Role>; manages: Manages[] }

async function loadGraph(): Promise<Graph> {
  const [r, m] = await Promise.all([
    post<{ role: Role[] }>('/v1/role/query', { userRights: ALL_RIGHTS }),
    post<{ manages: Manages[] }>('/v1/role/*/manages/query', {}),
  ]);
  return { roles: new Map(r.role.map((x) => [x.id, x])), manages: m.manages };
}

export function Roles({ selected }: { selected?: number }) {
  const graph = useLoad(loadGraph, []);
  const [joining, setJoining] = useState(false);
  const g = graph.data;
  return (
    <div>
      <div class="page-head">
        <h1>Roles</h1>
        <div class="actions">
          <button type="button" onClick={graph.reload}>Refresh</button>
          <button type="button" onClick={() => setJoining(true)}>Join a role with its password</button>
        </div>
      </div>
      <ErrorNote error={graph.error} context="Loading roles" />
      {!g ? (graph.loading && <Loading />) : (
        <div class="split">
          <section class="card tree-card" aria-labelledby="tree-title">
            <h2 id="tree-title">Role graph</h2>
            <RoleTree graph={g} selected={selected} />
          </section>
          <div>
            {selected !== undefined && g.roles.has(selected)
              ? <RoleDetail key={selected} role={g.roles.get(selected)!} graph={g} onChanged={graph.reload} />
              : <div class="card"><p class="muted">{selected !== undefined ? `Role ${selected} does not exist or is not visible to you.` : 'Select a role to see its rights, members and child roles.'}</p></div>}
          </div>
        </div>
      )}
      <Dialog open={joining} title="Join a role with its password" onClose={() => setJoining(false)}>
        {g && <JoinRole graph={g} onDone={() => { setJoining(false); graph.reload(); }} onCancel={() => setJoining(false)} />}
      </Dialog>
    </div>
  );
}

function RoleTree({ graph, selected }: { graph: Graph; selected?: number }) {
  const children = useMemo(() => {
    const map = new Map<number, Manages[]>();
    for (const m of graph.manages) if (graph.roles.has(m.childRoleId)) map.set(m.parentRoleId, [...(map.get(m.parentRoleId) ?? []), m]);
    return map;
  }, [graph]);
  const hasVisibleParent = new Set(graph.manages.filter((m) => graph.roles.has(m.parentRoleId)).map((m) => m.childRoleId));
  const roots = [...graph.roles.values()].filter((r) => !hasVisibleParent.has(r.id));
  const node = (role: Role, via: Manages | undefined, path: number[]) => (
    <li key={`${role.id}-${via?.id ?? 'root'}`}>
      <div class={`node${role.id === selected ? ' selected' : ''}`}>
        <Link href={`/roles/${role.id}`} aria-current={role.id === selected ? 'true' : undefined}>{role.name}</Link>
        <span class="muted small"> #{role.id}</span>
        {via && <span class="rel" title="rights the parent holds through this relation"><FlagChips flags={flagsOf(via)} /></span>}
      </div>
      {(children.get(role.id) ?? []).length > 0 && !path.includes(role.id) && (
        <ul>{children.get(role.id)!.map((m) => node(graph.roles.get(m.childRoleId)!, m, [...path, role.id]))}</ul>
      )}
    </li>
  );
  return <ul class="tree">{roots.sort((a, b) => a.id - b.id).map((r) => node(r, undefined, []))}</ul>;
}

function RoleDetail({ role, graph, onChanged }: { role: Role; graph: Graph; onChanged: () => void }) {
  const parents = graph.manages.filter((m) => m.childRoleId === role.id);
  const can = (r: Right) => role.userRights[r] === true;
  return (
    <div class="stack">
      <EditRole role={role} onChanged={onChanged} editable={can('roleManagement')} />
      <Section title="Managed by">
        {parents.length === 0 ? <p class="muted">No manages relation into this role is visible to you{role.id === 1 ? ' (the root role)' : ''}.</p> : (
          <ul class="plain">{parents.map((m) => <ParentRelation key={m.id} relation={m} graph={graph} onChanged={onChanged} />)}</ul>
        )}
      </Section>
      <CreateChild parent={role} onCreated={onChanged} />
      <MembersSection role={role} />
      <ExplainRole role={role} names={new Map([...graph.roles].map(([id, r]) => [id, r.name]))} />
    </div>
  );
}

function EditRole({ role, onChanged, editable }: { role: Role; onChanged: () => void; editable: boolean }) {
  const [name, setName] = useState(role.name);
  const [self, setSelf] = useState<Flags>(role.selfRights);
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const save = useAction(async () => {
    await put(`/v1/role/${role.id}`, { name: name.trim(), selfRights: self, ...(password ? { password } : {}) });
    setPassword('');
    setDone(true);
    onChanged();
  });
  return (
    <Section title={`Role ${role.name}`} actions={<span class="muted small">#{role.id}</span>}>
      <p class="small">Your rights over this role: <FlagChips flags={role.userRights} /></p>
      <form onSubmit={(e) => { e.preventDefault(); void save.run(); }}>
        <TextInput label="Name" value={name} onInput={(v) => { setName(v); setDone(false); }} required />
        <FlagsEditor legend="Rights of the role's members over the role itself (selfRights)" value={self} onChange={(f) => { setSelf(f); setDone(false); }} />
        <TextInput label="Join password (optional)" type="password" value={password} onInput={setPassword} autoComplete="new-password"
          hint="Lets someone who knows it attach this role under one of theirs. Leave empty to keep the current one." />
        <ErrorNote error={save.error} context="Saving the role" />
        {done && <Notice>Role saved.</Notice>}
        <div class="row end"><button type="submit" class="primary" disabled={save.busy || !editable} title={editable ? undefined : 'You lack roleManagement over this role'}>Save role</button></div>
      </form>
    </Section>
  );
}

function ParentRelation({ relation, graph, onChanged }: { relation: Manages; graph: Graph; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const [flags, setFlags] = useState<Flags>(flagsOf(relation));
  const [confirming, setConfirming] = useState(false);
  const save = useAction(async () => { await put(`/v1/role/${relation.parentRoleId}/manages/${relation.id}`, flags); setEditing(false); onChanged(); });
  const parent = graph.roles.get(relation.parentRoleId);
  return (
    <li class="relation">
      <div class="row between">
        <span><Link href={`/roles/${relation.parentRoleId}`}>{parent?.name ?? `role ${relation.parentRoleId}`}</Link> → this role <FlagChips flags={flagsOf(relation)} /></span>
        <span class="actions">
          <button type="button" onClick={() => setEditing(!editing)} aria-expanded={editing}>Edit flags</button>
          <button type="button" class="danger" onClick={() => setConfirming(true)}>Delete relation…</button>
        </span>
      </div>
      {editing && (
        <form onSubmit={(e) => { e.preventDefault(); void save.run(); }}>
          <FlagsEditor legend="Rights the parent's members get over this role and its descendants" value={flags} onChange={setFlags} />
          <ErrorNote error={save.error} context="Saving the relation" />
          <div class="row end"><button type="submit" class="primary" disabled={save.busy}>Save flags</button></div>
        </form>
      )}
      <Dialog open={confirming} title="Delete this manages relation?" onClose={() => setConfirming(false)}>
        <DeletePreview relation={relation} graph={graph} onCancel={() => setConfirming(false)}
          onDeleted={(info) => { setConfirming(false); onChanged(); if (info.deletedNodeIds.includes(relation.childRoleId)) navigate('/roles'); }} />
      </Dialog>
    </li>
  );
}

/** What the deletion takes with it, computed from the relations visible to the user before anything is sent. */
function DeletePreview({ relation, graph, onCancel, onDeleted }: { relation: Manages; graph: Graph; onCancel: () => void; onDeleted: (i: DeletionInfo) => void }) {
  const monitors = useLoad(() => post<{ monitors: Monitors[] }>('/v1/role/*/monitors/query', {}).then((r) => r.monitors), []);
  const [result, setResult] = useState<DeletionInfo | undefined>();
  const preview = useMemo(() => {
    const removed = new Set<number>([relation.id]);
    const roles = new Set<number>();
    const lose = (child: number) => {
      if (roles.has(child) || child === 1) return;
      if (graph.manages.some((m) => m.childRoleId === child && !removed.has(m.id))) return;
      roles.add(child);
      for (const m of graph.manages.filter((x) => x.parentRoleId === child)) { removed.add(m.id); lose(m.childRoleId); }
    };
    lose(relation.childRoleId);
    const devices = new Set<number>();
    for (const m of monitors.data ?? []) {
      const keepers = (monitors.data ?? []).filter((x) => x.deviceId === m.deviceId && x.monitorManagement && !roles.has(x.roleId));
      if (roles.has(m.roleId) && keepers.length === 0) devices.add(m.deviceId);
    }
    return { roles: [...roles], devices: [...devices], relations: removed.size };
  }, [graph, monitors.data, relation]);
  const remove = useAction(async () => {
    const info = await del<DeletionInfo>(`/v1/role/${relation.parentRoleId}/manages/${relation.id}`);
    setResult(info);
  });
  if (result) return (
    <div>
      <Notice>Deleted {result.deletedRelationIds.length} relation(s) and {result.deletedNodeIds.length} role(s)/device(s){result.deletedNodeIds.length ? `: ${result.deletedNodeIds.join(', ')}` : ''}.</Notice>
      <div class="row end"><button type="button" class="primary" onClick={() => onDeleted(result)}>Close</button></div>
    </div>
  );
  const name = (id: number) => graph.roles.get(id)?.name ?? `role ${id}`;
  return (
    <div>
      {monitors.loading ? <Loading /> : (
        <>
          <p>Removing <strong>{name(relation.parentRoleId)} → {name(relation.childRoleId)}</strong> also deletes, as far as you can see:</p>
          <ul>
            <li>{preview.roles.length === 0 ? 'no role (the child keeps another parent)' : `${preview.roles.length} role(s): ${preview.roles.map(name).join(', ')} — with their members and monitors relations`}</li>
            <li>{preview.devices.length === 0 ? 'no device' : `${preview.devices.length} device(s) left without a managing role: #${preview.devices.join(', #')}`}</li>
            <li>{preview.relations} manages relation(s)</li>
          </ul>
          <p class="muted small">Relations you cannot see may keep some of these alive; the server's answer lists what was really deleted.</p>
        </>
      )}
      <ErrorNote error={remove.error ?? monitors.error} context="Delete" />
      <div class="row end">
        <button type="button" onClick={onCancel}>Cancel</button>
        <button type="button" class="danger" disabled={remove.busy || monitors.loading} onClick={() => void remove.run()}>Delete</button>
      </div>
    </div>
  );
}

function CreateChild({ parent, onCreated }: { parent: Role; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [self, setSelf] = useState<Flags>(noFlags());
  const [rel, setRel] = useState<Flags>({ ...noFlags(), roleManagement: true, userManagement: true, deviceManagement: true });
  const [created, setCreated] = useState<Role | undefined>();
  const create = useAction(async () => {
    const r = await post<{ role: Role; manages: Manages }>('/v1/role', { role: { name: name.trim(), selfRights: self }, manages: rel }, { query: { parentRoleId: parent.id } });
    setCreated(r.role);
    setName('');
    onCreated();
  });
  return (
    <Section title="New child role">
      <form onSubmit={(e) => { e.preventDefault(); void create.run(); }}>
        <TextInput label="Child role name" value={name} onInput={setName} required />
        <div class="two">
          <FlagsEditor legend={`Rights ${parent.name} gets over it`} value={rel} onChange={setRel} />
          <FlagsEditor legend="Its members' rights over itself" value={self} onChange={setSelf} />
        </div>
        <ErrorNote error={create.error} context="Creating the role" />
        {created && <Notice>Created <Link href={`/roles/${created.id}`}>{created.name}</Link> (#{created.id}).</Notice>}
        <div class="row end"><button type="submit" class="primary" disabled={create.busy || !name.trim()}>Create child role</button></div>
      </form>
    </Section>
  );
}

function MembersSection({ role }: { role: Role }) {
  const list = useLoad(() => post<{ member: Member[] }>(`/v1/role/${role.id}/member/query`, {}).then((r) => r.member), [role.id]);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const add = useAction(async () => {
    await put(`/v1/role/${role.id}/member`, {}, { query: { userEmail: email.trim(), password: password || undefined } });
    setEmail('');
    setPassword('');
    list.reload();
  });
  const remove = useAction(async (m: Member) => { await del(`/v1/role/${role.id}/member/${m.id}`); list.reload(); });
  return (
    <Section title="Members">
      <ErrorNote error={list.error} context="Members" />
      {list.data && (list.data.length === 0 ? <p class="muted">No member visible to you.</p> : (
        <ul class="plain members">
          {list.data.map((m) => (
            <li key={m.id} class="row between">
              <span>{m.userEmail}</span>
              <button type="button" class="danger small" aria-label={`Remove ${m.userEmail}`} onClick={() => void remove.run(m)}>Remove</button>
            </li>
          ))}
        </ul>
      ))}
      <ErrorNote error={remove.error} context="Removing the member" />
      <form onSubmit={(e) => { e.preventDefault(); void add.run(); }}>
        <div class="grid-form">
          <TextInput label="Member e-mail" type="email" value={email} onInput={setEmail} required />
          <TextInput label="Password for a new user (optional)" type="password" value={password} onInput={setPassword} autoComplete="new-password"
            hint="Only used when the e-mail has no account yet; without it the server logs a random one." />
        </div>
        <div class="row end"><button type="submit" class="primary" disabled={add.busy || !email.trim()}>Add member</button></div>
      </form>
      <ErrorNote error={add.error} context="Adding the member" />
    </Section>
  );
}

function ExplainRole({ role, names }: { role: Role; names: Map<number, string> }) {
  const [right, setRight] = useState<Right>('roleManagement');
  const [answer, setAnswer] = useState<Explain | undefined>();
  const ask = useAction(async () => { setAnswer(await get<Explain>('/v1/access/explain', { query: { roleId: role.id, right } })); });
  return (
    <Section title="Why can I do this?">
      <form class="row" onSubmit={(e) => { e.preventDefault(); void ask.run(); }}>
        <Select label="Right over this role" value={right} onChange={(v) => setRight(v as Right)} options={RIGHTS.map((r): [string, string] => [r, `${RIGHT_LABELS[r]} (${r})`])} />
        <button type="submit">Explain</button>
      </form>
      <ErrorNote error={ask.error} context="Explain" />
      {answer && <ExplainView answer={answer} subject={`${right} over ${role.name}`} names={names} />}
    </Section>
  );
}

export function ExplainView({ answer, subject, names }: { answer: Explain; subject: string; names?: Map<number, string> }) {
  const role = (id: number | undefined) => <Link href={`/roles/${id}`}>{names?.get(id!) ?? `role #${id}`}</Link>;
  return (
    <div class={`explain ${answer.allowed ? 'yes' : 'no'}`}>
      <p><strong>{answer.allowed ? 'Yes' : 'No'}</strong>, you {answer.allowed ? 'may' : 'may not'} {subject}{answer.grantedBy ? ` — granted by ${answer.grantedBy}` : ''}.</p>
      {answer.via.length > 0 && (
        <ol class="chain">
          {answer.via.map((s) => (
            <li key={`${s.kind}-${s.id}`}>
              {s.kind === 'member' && <>you are a member of {role(s.roleId)}</>}
              {s.kind === 'manages' && <>{role(s.parentRoleId)} manages {role(s.childRoleId)} with <FlagChips flags={s as unknown as Partial<Flags>} /></>}
              {s.kind === 'monitors' && <>{role(s.roleId)} monitors <Link href={`/devices/${s.deviceId}`}>device #{s.deviceId}</Link>{s.monitorManagement ? ' with monitorManagement' : ` (reads ${s.reads?.join(', ') || '—'}; edits ${s.edits?.join(', ') || '—'})`}</>}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

function JoinRole({ graph, onDone, onCancel }: { graph: Graph; onDone: () => void; onCancel: () => void }) {
  const mine = [...graph.roles.values()].filter((r) => r.userRights.roleManagement);
  const [parent, setParent] = useState(String(mine[0]?.id ?? ''));
  const [child, setChild] = useState('');
  const [password, setPassword] = useState('');
  const [flags, setFlags] = useState<Flags>({ ...noFlags(), roleManagement: true, userManagement: true, deviceManagement: true });
  const join = useAction(async () => {
    await put(`/v1/role/${parent}/manages`, flags, { query: { childRoleId: child.trim(), childRolePassword: password } });
    onDone();
  });
  return (
    <form onSubmit={(e) => { e.preventDefault(); void join.run(); }}>
      <Select label="Your role (the parent)" value={parent} onChange={setParent} options={mine.map((r): [string, string] => [String(r.id), `${r.name} (#${r.id})`])} />
      <TextInput label="Id of the role to join" value={child} onInput={setChild} inputMode="numeric" required />
      <TextInput label="Its join password" type="password" value={password} onInput={setPassword} required autoComplete="off" />
      <FlagsEditor legend="Rights your role gets over it" value={flags} onChange={setFlags} />
      <ErrorNote error={join.error} context="Joining" />
      <div class="row end">
        <button type="button" onClick={onCancel}>Cancel</button>
        <button type="submit" class="primary" disabled={join.busy}>Join</button>
      </div>
    </form>
  );
}
