// One device: its properties, who monitors it, why the user may edit it, a controller's licenses, telemetry.
import { useEffect, useState } from 'preact/hooks';
import { get } from '../api.ts';
import { ErrorNote, Link, Loading, Section, TextInput, useAction, useLoad } from '../components.tsx';
import type { Device, Explain } from '../types.ts';
import { Telemetry } from './telemetry.tsx';
import { ExplainView } from './roles.tsx';
import { PropertiesEditor, loadDevice } from './device-properties.tsx';
import { MonitorsSection } from './device-monitors.tsx';
import { ControllerLicenses } from './license-table.tsx';
import { AlarmBadge, DeviceAlarms } from './alarms.tsx';

export function DevicePage({ id }: { id: number }) {
  const loaded = useLoad(() => loadDevice(id), [id]);
  const [device, setDevice] = useState<Device | undefined>();
  useEffect(() => { if (loaded.data) setDevice(loaded.data); }, [loaded.data]);
  if (loaded.error) return <div><p><Link href="/devices">← Devices</Link></p><ErrorNote error={loaded.error} context={`Device ${id}`} /></div>;
  if (!device) return <Loading />;
  const p = device.properties;
  const isController = p.nodeType === 'smartgridController' && typeof p.nodeId === 'string';
  return (
    <div>
      <p class="crumbs"><Link href="/devices">Devices</Link> / #{device.id}</p>
      <div class="page-head">
        <h1>{typeof p.name === 'string' && p.name ? p.name : `Device ${device.id}`}</h1>
        <div class="meta">
          {typeof p.nodeType === 'string' && <span class="chip">{p.nodeType}</span>}
          {typeof p.nodeId === 'string' && <span class="chip mono">{p.nodeId}</span>}
          {device.userRights.monitorManagement ? <span class="badge ok">full control</span> : <span class="badge">limited rights</span>}
          <AlarmBadge deviceId={device.id} />
        </div>
      </div>
      <PropertiesEditor key={device.id} device={device} onSaved={setDevice} />
      <div class="two">
        <MonitorsSection deviceId={device.id} manage={device.userRights.monitorManagement} />
        <WhySection device={device} />
      </div>
      <DeviceAlarms device={device} />
      {isController && <ControllerLicenses nodeId={p.nodeId as string} />}
      <Telemetry device={device} />
    </div>
  );
}


function WhySection({ device }: { device: Device }) {
  const [property, setProperty] = useState('');
  const [answer, setAnswer] = useState<Explain | undefined>();
  const ask = useAction(async () => {
    setAnswer(await get<Explain>('/v1/access/explain', { query: { deviceId: device.id, property: property.trim() || undefined, action: 'edit' } }));
  });
  return (
    <Section title="Why can I edit this?">
      <form class="row" onSubmit={(e) => { e.preventDefault(); void ask.run(); }}>
        <TextInput label="Property (empty: the device itself)" value={property} onInput={setProperty} placeholder="e.g. name" />
        <button type="submit">Explain</button>
      </form>
      <ErrorNote error={ask.error} context="Explain" />
      {answer && <ExplainView answer={answer} subject={property.trim() ? `edit ${property.trim()}` : 'edit this device'} />}
    </Section>
  );
}

