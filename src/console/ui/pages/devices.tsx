// The device table: one query for the index (four properties per device), then search, filters, sort and paging in
// the browser — 10,000 devices are ~1 MB of JSON once, and each page renders 50 rows.
import { useMemo, useState } from 'preact/hooks';
import { get, post } from '../api.ts';
import { Check, Dialog, ErrorNote, Link, Loading, Select, TextInput, formatTime, useAction, useLoad } from '../components.tsx';
import { navigate } from '../router.ts';
import type { Device, Monitors, Role } from '../types.ts';

const PAGE = 50;
type SortKey = 'id' | 'name' | 'nodeId' | 'nodeType' | 'isActive' | 'lastUpdate';
interface Row { id: number; name: string; nodeId: string; nodeType: string; isActive: boolean | undefined; lastUpdate: string }

const text = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

function toRow(d: Device): Row {
  const p = d.properties;
  return { id: d.id, name: text(p.name), nodeId: text(p.nodeId), nodeType: text(p.nodeType), isActive: typeof p.isActive === 'boolean' ? p.isActive : undefined, lastUpdate: d.lastUpdate };
}

export function Devices() {
  const index = useLoad(async () => {
    const r = await post<{ device: Device[] }>('/v1/device/query', { fields: ['name', 'nodeId', 'nodeType', 'isActive'] });
    return r.device.map(toRow);
  }, []);
  const [search, setSearch] = useState('');
  const [nodeType, setNodeType] = useState('');
  const [active, setActive] = useState('');
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: 'id', desc: false });
  const [page, setPage] = useState(0);
  const [creating, setCreating] = useState(false);

  const rows = index.data ?? [];
  const nodeTypes = useMemo(() => [...new Set(rows.map((r) => r.nodeType).filter(Boolean))].sort(), [rows]);
  const shown = useMemo(() => {
    const q = search.trim().toLowerCase();
    const out = rows.filter((r) => (!nodeType || r.nodeType === nodeType)
      && (active === '' || String(r.isActive === true) === active)
      && (!q || String(r.id) === q || r.name.toLowerCase().includes(q) || r.nodeId.toLowerCase().includes(q)));
    const dir = sort.desc ? -1 : 1;
    const key = sort.key;
    out.sort((a, b) => {
      const x = a[key] ?? '';
      const y = b[key] ?? '';
      return (x < y ? -1 : x > y ? 1 : a.id - b.id) * dir;
    });
    return out;
  }, [rows, search, nodeType, active, sort]);
  const pages = Math.max(1, Math.ceil(shown.length / PAGE));
  const current = Math.min(page, pages - 1);
  const slice = shown.slice(current * PAGE, current * PAGE + PAGE);

  const header = (key: SortKey, label: string) => (
    <th scope="col" aria-sort={sort.key === key ? (sort.desc ? 'descending' : 'ascending') : 'none'}>
      <button type="button" class="sort" onClick={() => { setSort({ key, desc: sort.key === key ? !sort.desc : false }); setPage(0); }}>
        {label}<span aria-hidden="true">{sort.key === key ? (sort.desc ? ' ▼' : ' ▲') : ''}</span>
      </button>
    </th>
  );

  return (
    <div>
      <div class="page-head">
        <h1>Devices</h1>
        <div class="actions">
          <button type="button" onClick={index.reload}>Refresh</button>
          <button type="button" class="primary" onClick={() => setCreating(true)}>New device</button>
        </div>
      </div>
      <div class="card">
        <div class="filters" role="search">
          <TextInput label="Search" value={search} onInput={(v) => { setSearch(v); setPage(0); }} placeholder="id, name or nodeId" />
          <Select label="Node type" value={nodeType} onChange={(v) => { setNodeType(v); setPage(0); }} options={[['', 'All types'], ...nodeTypes.map((t): [string, string] => [t, t])]} />
          <Select label="Active" value={active} onChange={(v) => { setActive(v); setPage(0); }} options={[['', 'Any'], ['true', 'Active'], ['false', 'Inactive']]} />
        </div>
        <ErrorNote error={index.error} context="Loading devices" />
        {index.loading && !index.data ? <Loading /> : (
          <>
            <div class="table-wrap">
              <table class="grid" aria-label="Devices" aria-rowcount={shown.length}>
                <thead><tr>{header('id', 'Id')}{header('name', 'Name')}{header('nodeId', 'Node id')}{header('nodeType', 'Node type')}{header('isActive', 'Active')}{header('lastUpdate', 'Last update')}</tr></thead>
                <tbody>
                  {slice.map((r) => (
                    <tr key={r.id}>
                      <td class="num">{r.id}</td>
                      <td><Link href={`/devices/${r.id}`}>{r.name || <span class="muted">(unnamed)</span>}</Link></td>
                      <td class="mono">{r.nodeId}</td>
                      <td>{r.nodeType}</td>
                      <td>{r.isActive === undefined ? <span class="muted">—</span> : r.isActive ? <span class="badge ok">active</span> : <span class="badge">inactive</span>}</td>
                      <td>{formatTime(r.lastUpdate)}</td>
                    </tr>
                  ))}
                  {slice.length === 0 && <tr><td colSpan={6} class="muted empty">No device matches.</td></tr>}
                </tbody>
              </table>
            </div>
            <nav class="pager" aria-label="Pages">
              <span class="muted" aria-live="polite">{shown.length === 0 ? '0 devices' : `${current * PAGE + 1}–${current * PAGE + slice.length} of ${shown.length.toLocaleString()} devices`}{shown.length !== rows.length && ` (${rows.length.toLocaleString()} in total)`}</span>
              <button type="button" disabled={current === 0} onClick={() => setPage(0)}>First</button>
              <button type="button" disabled={current === 0} onClick={() => setPage(current - 1)}>Previous</button>
              <span>Page {current + 1} of {pages}</span>
              <button type="button" disabled={current >= pages - 1} onClick={() => setPage(current + 1)}>Next</button>
              <button type="button" disabled={current >= pages - 1} onClick={() => setPage(pages - 1)}>Last</button>
            </nav>
          </>
        )}
      </div>
      <Dialog open={creating} title="New device" onClose={() => setCreating(false)}>
        <CreateDevice onClose={() => setCreating(false)} />
      </Dialog>
    </div>
  );
}

function CreateDevice({ onClose }: { onClose: () => void }) {
  const roles = useLoad(() => post<{ role: Role[] }>('/v1/role/query', { userRights: { deviceManagement: true, roleManagement: true } }), []);
  const types = useLoad(() => get<{ nodeTypes: string[] }>('/v1/device/schema'), []);
  const usable = (roles.data?.role ?? []).filter((r) => r.userRights.deviceManagement || r.userRights.roleManagement);
  const [roleId, setRoleId] = useState('');
  const [nodeType, setNodeType] = useState('smartgridController');
  const [nodeId, setNodeId] = useState('');
  const [name, setName] = useState('');
  const [isActive, setIsActive] = useState(true);
  const role = roleId || String(usable[0]?.id ?? '');
  const create = useAction(async () => {
    const properties: Record<string, unknown> = { nodeType, isActive };
    if (nodeId.trim()) properties.nodeId = nodeId.trim();
    if (name.trim()) properties.name = name.trim();
    const r = await post<{ device: Device; monitors: Monitors }>('/v1/device', { properties }, { query: { roleId: role, validate: true } });
    onClose();
    navigate(`/devices/${r.device.id}`);
  });
  return (
    <form onSubmit={(e) => { e.preventDefault(); void create.run(); }}>
      <ErrorNote error={roles.error ?? types.error} context="Loading" />
      <Select label="Role that manages it" value={role} onChange={setRoleId} options={usable.map((r): [string, string] => [String(r.id), `${r.name} (#${r.id})`])}
        hint="The device gets a monitors relation with full rights from this role." />
      <Select label="Node type" value={nodeType} onChange={setNodeType} options={(types.data?.nodeTypes ?? [nodeType]).map((t): [string, string] => [t, t])} />
      <TextInput label="Node id" value={nodeId} onInput={setNodeId} hint="Unique; telemetry lines carry it as the nodeId tag." />
      <TextInput label="Name" value={name} onInput={setName} />
      <Check label="Active" checked={isActive} onChange={setIsActive} />
      <ErrorNote error={create.error} context="Creating the device" />
      <div class="row end">
        <button type="button" onClick={onClose}>Cancel</button>
        <button type="submit" class="primary" disabled={create.busy || !role}>Create device</button>
      </div>
    </form>
  );
}
