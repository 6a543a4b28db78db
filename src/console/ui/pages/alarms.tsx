// Alarms: the list (active first, then by severity, newest first) with acknowledge and clear; on a device page, its
// badge of active alarms, its rules (each editable), and a form for a new rule (alarm-rule-form.tsx).
import { useState } from 'preact/hooks';
import { del, post } from '../api.ts';
import { Check, ErrorNote, Link, Section, formatTime, useAction, useLoad } from '../components.tsx';
import type { Device } from '../types.ts';
import { alarmOrder, type Severity } from '../alarm-order.ts';
import { RuleForm, type Rule } from './alarm-rule-form.tsx';

export interface Alarm {
  id: number; ruleId: number | null; ruleName: string; roleId: number; deviceId: number; type: 'above' | 'below' | 'noData';
  severity: Severity; state: 'active_unack' | 'active_ack' | 'cleared_unack' | 'cleared_ack';
  series: { namespace: Record<string, string>; measurement: string; field: string }; value: number | null;
  startTime: string; ackTime: string | null; ackBy: string | null; clearTime: string | null; clearedBy: string | null;
}
const STATE_TEXT: Record<Alarm['state'], string> = {
  active_unack: 'active, unacknowledged', active_ack: 'active, acknowledged', cleared_unack: 'cleared, unacknowledged', cleared_ack: 'cleared, acknowledged',
};

function conditionText(r: Rule): string {
  const c = r.condition;
  return c.type === 'noData' ? `no data for ${c.seconds} s` : `${c.type} ${c.value}${c.hysteresis ? ` (±${c.hysteresis})` : ''}${r.holdSeconds ? ` for ${r.holdSeconds} s` : ''}`;
}

function AlarmTable({ alarms, onChanged, showDevice }: { alarms: Alarm[]; onChanged: () => void; showDevice: boolean }) {
  const act = useAction(async (id: number, what: 'ack' | 'clear') => {
    await post(`/v1/alarm/${id}/${what}`);
    onChanged();
  });
  if (alarms.length === 0) return <p class="muted">No alarms.</p>;
  return (
    <div>
      <ErrorNote error={act.error} context="Alarm" />
      <table>
        <thead><tr><th>Severity</th><th>Rule</th>{showDevice && <th>Device</th>}<th>State</th><th>Since</th><th>Value</th><th /></tr></thead>
        <tbody>
          {[...alarms].sort(alarmOrder).map((a) => (
            <tr key={a.id} class={a.state.startsWith('active') ? 'alarm-active' : undefined}>
              <td><span class={`badge severity-${a.severity}`}>{a.severity}</span></td>
              <td>{a.ruleName}<div class="small muted mono">{a.series.measurement}.{a.series.field}</div></td>
              {showDevice && <td><Link href={`/devices/${a.deviceId}`}>#{a.deviceId}</Link></td>}
              <td>{STATE_TEXT[a.state]}{a.ackBy && <div class="small muted">by {a.ackBy}</div>}</td>
              <td>{formatTime(a.startTime)}{a.clearTime && <div class="small muted">cleared {formatTime(a.clearTime)}</div>}</td>
              <td class="mono">{a.value ?? '—'}</td>
              <td class="row">
                {a.ackTime === null && <button type="button" disabled={act.busy} onClick={() => void act.run(a.id, 'ack')} aria-label={`Acknowledge alarm ${a.id}`}>Acknowledge</button>}
                {a.clearTime === null && <button type="button" disabled={act.busy} onClick={() => void act.run(a.id, 'clear')} aria-label={`Clear alarm ${a.id}`}>Clear</button>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Alarms() {
  const [withCleared, setWithCleared] = useState(false);
  const [version, setVersion] = useState(0);
  const states = withCleared ? undefined : ['active_unack', 'active_ack'];
  const list = useLoad(() => post<{ alarms: Alarm[] }>('/v1/alarm/query', { filter: states ? { state: states } : {}, limit: 500 }).then((r) => r.alarms), [withCleared, version]);
  return (
    <div>
      <div class="page-head"><h1>Alarms</h1></div>
      <p class="muted">Alarms of the devices you may read: active first, the most severe on top.</p>
      <Section title={withCleared ? 'All alarms' : 'Active alarms'} actions={<button type="button" onClick={() => setVersion((n) => n + 1)}>Refresh</button>}>
        <Check label="Show cleared alarms too" checked={withCleared} onChange={setWithCleared} />
        <ErrorNote error={list.error} context="Alarms" />
        {list.data && <AlarmTable alarms={list.data} onChanged={() => setVersion((n) => n + 1)} showDevice />}
      </Section>
    </div>
  );
}

/** The badge on a device page: how many of its alarms are active. */
export function AlarmBadge({ deviceId }: { deviceId: number }) {
  const list = useLoad(() => post<{ alarms: Alarm[] }>('/v1/alarm/query', { filter: { deviceId: [deviceId], state: ['active_unack', 'active_ack'] } }).then((r) => r.alarms), [deviceId]);
  const n = list.data?.length ?? 0;
  if (n === 0) return null;
  const worst = [...list.data!].sort(alarmOrder)[0].severity;
  return <Link href="/alarms" class={`badge severity-${worst}`}>{n} active alarm{n === 1 ? '' : 's'}</Link>;
}

/** A device's alarms and rules, and a form for a new rule on one of its declared series. */
export function DeviceAlarms({ device }: { device: Device }) {
  const [version, setVersion] = useState(0);
  const alarms = useLoad(() => post<{ alarms: Alarm[] }>('/v1/alarm/query', { filter: { deviceId: [device.id] }, limit: 50 }).then((r) => r.alarms), [device.id, version]);
  // a rule of every device of its role, narrowed to another nodeType, does not watch this one
  const rules = useLoad(() => post<{ rules: Rule[] }>('/v1/alarm/rule/query', { filter: { deviceId: [device.id] } })
    .then((r) => r.rules.filter((x) => x.deviceIds !== null || x.nodeType === null || x.nodeType === device.properties.nodeType)), [device.id, version]);
  const [editing, setEditing] = useState<Rule | undefined>(undefined);
  const saved = () => { setEditing(undefined); setVersion((n) => n + 1); };
  const remove = useAction(async (id: number) => { await del(`/v1/alarm/rule/${id}`); saved(); });
  return (
    <Section title="Alarms" actions={<button type="button" onClick={() => setVersion((n) => n + 1)}>Refresh alarms</button>}>
      <ErrorNote error={alarms.error ?? rules.error} context="Alarms" />
      {alarms.data && <AlarmTable alarms={alarms.data} onChanged={() => setVersion((n) => n + 1)} showDevice={false} />}
      <h3>Rules</h3>
      {rules.data && (rules.data.length === 0 ? <p class="muted">No rule watches this device.</p> : (
        <ul class="plain">
          {rules.data.map((r) => (
            <li key={r.id}>
              <span class={`badge severity-${r.severity}`}>{r.severity}</span> <strong>{r.name}</strong>: {r.series.measurement}.{r.series.field} {conditionText(r)}
              {r.deviceIds === null && <span class="small muted"> (every device of its role{r.nodeType === null ? '' : ` of nodeType ${r.nodeType}`})</span>}
              {r.notify.length > 0 && <span class="small muted"> — mails {r.notify.map((n) => n.userEmail).join(', ')}</span>}
              {' '}<button type="button" onClick={() => setEditing(r)} aria-label={`Edit rule ${r.name}`}>Edit</button>
              {' '}<button type="button" class="danger" onClick={() => { if (confirm(`Delete the rule ${r.name}?`)) void remove.run(r.id); }} aria-label={`Delete rule ${r.name}`}>Delete</button>
            </li>
          ))}
        </ul>
      ))}
      <ErrorNote error={remove.error} context="Deleting the rule" />
      {editing
        ? <RuleForm key={`edit-${editing.id}`} device={device} rule={editing} onSaved={saved} onCancel={() => setEditing(undefined)} />
        : <RuleForm key="new" device={device} onSaved={saved} />}
    </Section>
  );
}
