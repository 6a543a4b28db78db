// Licenses: create and list every license (root members), activate a key, claim one for a controller, and each
// controller's licenses.
import { useState } from 'preact/hooks';
import { get, post } from '../api.ts';
import { ErrorNote, Link, Notice, Section, Select, TextInput, useAction, useLoad } from '../components.tsx';
import type { Device, License } from '../types.ts';
import type { Me } from '../types.ts';
import { LicenseTable } from './license-table.tsx';

export function Licenses({ me }: { me: Me }) {
  const controllers = useLoad(() => post<{ device: Device[] }>('/v1/device/query', { filter: { nodeType: ['smartgridController'] }, fields: ['nodeId', 'name'] })
    .then((r) => r.device.filter((d) => typeof d.properties.nodeId === 'string')), []);
  const nodeIds = (controllers.data ?? []).map((d) => d.properties.nodeId as string);
  // bumped by a creation, so the list shows the new licenses
  const [version, setVersion] = useState(0);
  return (
    <div>
      <div class="page-head"><h1>Licenses</h1></div>
      {me.isRoot && <CreateLicenses onCreated={() => setVersion((n) => n + 1)} />}
      {me.isRoot && <AllLicenses version={version} />}
      <div class="two">
        <ClaimLicense nodeIds={nodeIds} />
        <ActivateLicense />
      </div>
      <Section title="Controllers">
        <ErrorNote error={controllers.error} context="Controllers" />
        {controllers.data && (controllers.data.length === 0 ? <p class="muted">No smartgridController device visible to you.</p> : (
          <ul class="plain">{controllers.data.map((d) => <ControllerRow key={d.id} device={d} />)}</ul>
        ))}
      </Section>
    </div>
  );
}

function ControllerRow({ device }: { device: Device }) {
  const [open, setOpen] = useState(false);
  const nodeId = device.properties.nodeId as string;
  const list = useLoad(() => (open ? get<{ licenses: License[] }>(`/v1/license/controller/${encodeURIComponent(nodeId)}`) : Promise.resolve(undefined)), [open, nodeId]);
  return (
    <li class="relation">
      <div class="row between">
        <span><Link href={`/devices/${device.id}`}>{typeof device.properties.name === 'string' ? device.properties.name : `Device ${device.id}`}</Link> <span class="chip mono">{nodeId}</span></span>
        <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>{open ? 'Hide licenses' : 'Show licenses'}</button>
      </div>
      {open && <ErrorNote error={list.error} context="Licenses" />}
      {open && list.data && <LicenseTable licenses={list.data.licenses} empty="No license claimed for this controller." />}
    </li>
  );
}

const optionalKw = (s: string) => (s.trim() === '' ? undefined : Number(s));

function CreateLicenses({ onCreated }: { onCreated: () => void }) {
  const [type, setType] = useState('residential');
  const [duration, setDuration] = useState('365');
  const [count, setCount] = useState('1');
  const [kw, setKw] = useState({ gridKw: '', solarKw: '', batteryKw: '', evKw: '' });
  const [created, setCreated] = useState<License[]>([]);
  const create = useAction(async () => {
    const body: Record<string, unknown> = { type, duration: Number(duration), count: Number(count) };
    for (const [k, v] of Object.entries(kw)) if (optionalKw(v) !== undefined) body[k] = optionalKw(v);
    const r = await post<{ licenses: License[] }>('/v1/license', body);
    setCreated([...r.licenses, ...created]);
    onCreated();
  });
  const kwInput = (k: keyof typeof kw, label: string) => <TextInput label={label} type="number" value={kw[k]} onInput={(v) => setKw({ ...kw, [k]: v })} />;
  return (
    <Section title="Create licenses">
      <form onSubmit={(e) => { e.preventDefault(); void create.run(); }}>
        <div class="grid-form">
          <Select label="Type" value={type} onChange={setType} options={[['residential', 'Residential'], ['commercial', 'Commercial']]} />
          <TextInput label="Duration (days)" type="number" value={duration} onInput={setDuration} required />
          <TextInput label="How many" type="number" value={count} onInput={setCount} required hint="1 to 1000 keys at once" />
          {kwInput('gridKw', 'Grid kW')}{kwInput('solarKw', 'Solar kW')}{kwInput('batteryKw', 'Battery kW')}{kwInput('evKw', 'EV kW')}
        </div>
        <ErrorNote error={create.error} context="Creating licenses" />
        <div class="row end"><button type="submit" class="primary" disabled={create.busy}>Create</button></div>
      </form>
      {created.length > 0 && (
        <>
          <h3>Created in this session</h3>
          <p class="muted small">The keys are shown here once per session; hand them to the installer or claim them below.</p>
          <LicenseTable licenses={created} empty="" />
        </>
      )}
    </Section>
  );
}

const PAGE = 50;
const STATES: [string, string][] = [['all', 'All'], ['unclaimed', 'Not claimed'], ['claimed', 'Claimed'], ['inactive', 'Not activated'], ['active', 'Activated']];
const FILTERS: Record<string, Record<string, boolean>> = {
  all: {}, unclaimed: { claimed: false }, claimed: { claimed: true }, inactive: { activated: false }, active: { activated: true },
};

/** Every license, newest first, a page at a time (POST /v1/license/query). */
function AllLicenses({ version }: { version: number }) {
  const [state, setState] = useState('all');
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => post<{ licenses: License[]; total: number }>('/v1/license/query', { filter: FILTERS[state], limit: PAGE, offset }), [state, offset, version]);
  const total = list.data?.total ?? 0;
  return (
    <Section title="All licenses">
      <Select label="Show" value={state} onChange={(v) => { setState(v); setOffset(0); }} options={STATES} />
      <ErrorNote error={list.error} context="Licenses" />
      {list.data && <LicenseTable licenses={list.data.licenses} empty="No license matches." />}
      {list.data && total > 0 && (
        <div class="row between">
          <span class="muted small">{offset + 1}–{Math.min(offset + PAGE, total)} of {total}</span>
          <span class="row">
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>Previous</button>
            <button type="button" disabled={offset + PAGE >= total} onClick={() => setOffset(offset + PAGE)}>Next</button>
          </span>
        </div>
      )}
    </Section>
  );
}

function ClaimLicense({ nodeIds }: { nodeIds: string[] }) {
  const [key, setKey] = useState('');
  const [nodeId, setNodeId] = useState('');
  const [done, setDone] = useState<string | undefined>();
  const target = nodeId || nodeIds[0] || '';
  const claim = useAction(async () => {
    const r = await post<{ license: { key: string; nodeId: string } }>('/v1/license/claim', { licenseKey: key.trim(), nodeId: target });
    setDone(`License ${r.license.key} is linked to ${r.license.nodeId}.`);
    setKey('');
  });
  return (
    <Section title="Claim a license for a controller">
      <form onSubmit={(e) => { e.preventDefault(); setDone(undefined); void claim.run(); }}>
        <TextInput label="License key" value={key} onInput={setKey} required placeholder="GK-…" />
        <Select label="Controller" value={target} onChange={setNodeId} options={nodeIds.map((n): [string, string] => [n, n])} />
        <ErrorNote error={claim.error} context="Claim" />
        {done && <Notice>{done}</Notice>}
        <div class="row end"><button type="submit" class="primary" disabled={claim.busy || !target}>Claim</button></div>
      </form>
    </Section>
  );
}

function ActivateLicense() {
  const [key, setKey] = useState('');
  const [done, setDone] = useState<License | undefined>();
  const activate = useAction(async () => {
    const r = await post<{ license: License }>('/v1/license/activate', { key: key.trim() });
    setDone(r.license);
    setKey('');
  });
  return (
    <Section title="Activate a license">
      <form onSubmit={(e) => { e.preventDefault(); setDone(undefined); void activate.run(); }}>
        <TextInput label="Key to activate" value={key} onInput={setKey} required placeholder="GK-…" hint="Starts the license's duration now." />
        <ErrorNote error={activate.error} context="Activation" />
        {done && <Notice>Activated {done.key}: valid until {done.deactivationDate ? new Date(done.deactivationDate).toLocaleDateString() : '—'}.</Notice>}
        <div class="row end"><button type="submit" class="primary" disabled={activate.busy}>Activate</button></div>
      </form>
    </Section>
  );
}
