// Licenses shown on a controller's page and on the licenses screen.
import { useState } from 'preact/hooks';
import { get, post } from '../api.ts';
import { ErrorNote, Notice, Section, TextInput, formatTime, useAction, useLoad } from '../components.tsx';
import type { License } from '../types.ts';

export function ControllerLicenses({ nodeId }: { nodeId: string }) {
  const list = useLoad(() => get<{ licenses: License[] }>(`/v1/license/controller/${encodeURIComponent(nodeId)}`), [nodeId]);
  const [key, setKey] = useState('');
  const [done, setDone] = useState<string | undefined>();
  const claim = useAction(async () => {
    const r = await post<{ license: { key: string } }>('/v1/license/claim', { licenseKey: key.trim(), nodeId });
    setDone(`License ${r.license.key} is now linked to ${nodeId}.`);
    setKey('');
    list.reload();
  });
  return (
    <Section title="Licenses of this controller">
      <ErrorNote error={list.error} context="Licenses" />
      {list.data && <LicenseTable licenses={list.data.licenses} empty="No license claimed for this controller yet." />}
      <form class="row" onSubmit={(e) => { e.preventDefault(); void claim.run(); }}>
        <TextInput label="License key to claim" value={key} onInput={setKey} placeholder="GK-…" />
        <button type="submit" class="primary" disabled={!key.trim() || claim.busy}>Claim for {nodeId}</button>
      </form>
      <ErrorNote error={claim.error} context="Claim" />
      {done && <Notice>{done}</Notice>}
    </Section>
  );
}

export function LicenseTable({ licenses, empty }: { licenses: License[]; empty: string }) {
  if (licenses.length === 0) return <p class="muted">{empty}</p>;
  const kw = (l: License) => [['grid', l.gridKw], ['solar', l.solarKw], ['battery', l.batteryKw], ['EV', l.evKw]].filter(([, v]) => v !== null).map(([n, v]) => `${n} ${v} kW`).join(', ') || '—';
  return (
    <div class="table-wrap">
      <table class="grid">
        <thead><tr><th scope="col">Key</th><th scope="col">Type</th><th scope="col">Power</th><th scope="col">Duration</th><th scope="col">Activated</th><th scope="col">Ends</th></tr></thead>
        <tbody>
          {licenses.map((l) => (
            <tr key={l.id}>
              <td class="mono">{l.key}</td><td>{l.type}</td><td>{kw(l)}</td><td>{l.duration} days</td>
              <td>{l.activationDate ? formatTime(l.activationDate) : <span class="badge">not activated</span>}</td>
              <td>{formatTime(l.deactivationDate)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
