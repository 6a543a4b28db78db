// The form of an alarm rule on a device page: a new rule, or an existing one edited (PUT replaces it). It watches the
// device on screen, or every device its role monitors (optionally only those of one nodeType); its series is picked
// from the device's declared nodeInfluxSeries (an edited rule's own series is offered too); its recipients are picked
// among the members of the rule's role.
import { useState } from 'preact/hooks';
import { post, put } from '../api.ts';
import { Check, ErrorNote, TextInput, Select, useAction, useId, useLoad } from '../components.tsx';
import type { Device, Member, Role } from '../types.ts';
import type { Severity } from '../alarm-order.ts';

export interface Rule {
  id: number; roleId: number; name: string; deviceIds: number[] | null; nodeType: string | null;
  series: { namespace: Record<string, string>; measurement: string; field: string };
  condition: { type: 'above' | 'below'; value: number; hysteresis: number } | { type: 'noData'; seconds: number };
  holdSeconds: number; clearHoldSeconds: number; severity: Severity; enabled: boolean;
  notify: { userEmail: string; language: string }[]; mailIntervalSeconds: number;
}

interface SeriesSpec { measurement: string; database?: string; retentionPolicy?: string; fields?: string[] }
interface Choice { key: string; label: string; series: Rule['series'] }

/** The series a rule may be set on: the device's declared ones, and an edited rule's own. */
function seriesChoices(device: Device, rule: Rule | undefined): Choice[] {
  const declared = (Array.isArray(device.properties.nodeInfluxSeries) ? device.properties.nodeInfluxSeries : []) as SeriesSpec[];
  const out: Choice[] = [];
  const add = (series: Rule['series']) => {
    const key = JSON.stringify([series.namespace, series.measurement, series.field]);
    if (out.some((c) => c.key === key)) return;
    const ns = series.namespace;
    const where = ns.database !== undefined ? ` (${ns.database}/${ns.retentionPolicy ?? 'autogen'})` : ns.bucket !== undefined ? ` (${ns.organization}/${ns.bucket})` : '';
    out.push({ key, label: `${series.measurement}.${series.field}${where}`, series });
  };
  if (rule !== undefined) add(rule.series);
  for (const s of declared) {
    for (const field of s.fields ?? []) {
      add({ namespace: { version: '1', database: s.database ?? 'telemetry', retentionPolicy: s.retentionPolicy ?? 'autogen' }, measurement: s.measurement, field });
    }
  }
  return out;
}

function RadioGroup({ legend, value, onChange, options }: { legend: string; value: string; onChange: (v: string) => void; options: [string, string][] }) {
  const name = useId('radio');
  return (
    <fieldset class="choices">
      <legend>{legend}</legend>
      {options.map(([v, text]) => (
        <label key={v} class="check">
          <input type="radio" name={name} value={v} checked={value === v} onChange={() => onChange(v)} />
          <span>{text}</span>
        </label>
      ))}
    </fieldset>
  );
}

/** Recipients: the members of the role (and whoever the rule already names), each a checkbox. */
function Recipients({ roleId, chosen, onChange }: { roleId: string; chosen: string[]; onChange: (emails: string[]) => void }) {
  const members = useLoad(() => (roleId ? post<{ member: Member[] }>(`/v1/role/${roleId}/member/query`, {}).then((r) => r.member) : Promise.resolve([])), [roleId]);
  const emails = [...new Set([...(members.data ?? []).map((m) => m.userEmail), ...chosen])].sort();
  return (
    <fieldset class="choices">
      <legend>Notify by e-mail</legend>
      <ErrorNote error={members.error} context="Members of the role" />
      {emails.length === 0 ? <p class="small muted">The role has no member visible to you.</p> : emails.map((email) => (
        <Check key={email} label={email} checked={chosen.includes(email)}
          onChange={(on) => onChange(on ? [...chosen, email] : chosen.filter((e) => e !== email))} />
      ))}
    </fieldset>
  );
}

export function RuleForm({ device, rule, onSaved, onCancel }: { device: Device; rule?: Rule; onSaved: () => void; onCancel?: () => void }) {
  const roles = useLoad(() => post<{ role: Role[] }>('/v1/role/query', {}).then((r) => r.role), []);
  const choices = seriesChoices(device, rule);
  const c = rule?.condition;
  const [roleId, setRoleId] = useState(rule ? String(rule.roleId) : '');
  const [scope, setScope] = useState(rule && rule.deviceIds === null ? 'role' : 'device');
  const [nodeType, setNodeType] = useState(rule?.nodeType ?? '');
  const [series, setSeries] = useState(choices[0]?.key ?? '');
  const [name, setName] = useState(rule?.name ?? '');
  const [type, setType] = useState<string>(c?.type ?? 'above');
  const [value, setValue] = useState(c === undefined ? '' : String(c.type === 'noData' ? c.seconds : c.value));
  const [hysteresis, setHysteresis] = useState(c !== undefined && c.type !== 'noData' ? String(c.hysteresis) : '0');
  const [hold, setHold] = useState(String(rule?.holdSeconds ?? 0));
  const [severity, setSeverity] = useState<string>(rule?.severity ?? 'major');
  const [notify, setNotify] = useState<string[]>(rule?.notify.map((n) => n.userEmail) ?? []);
  const role = roleId || String(roles.data?.[0]?.id ?? '');
  const save = useAction(async () => {
    const picked = choices.find((x) => x.key === series) ?? choices[0];
    const condition = type === 'noData' ? { type, seconds: Number(value) } : { type, value: Number(value), hysteresis: Number(hysteresis || 0) };
    const languages = new Map(rule?.notify.map((n) => [n.userEmail, n.language]));
    const body = {
      name, severity, condition, holdSeconds: type === 'noData' ? 0 : Number(hold || 0), series: picked.series,
      ...(scope === 'device' ? { deviceIds: rule?.deviceIds ?? [device.id] } : nodeType.trim() ? { nodeType: nodeType.trim() } : {}),
      notify: notify.map((userEmail) => (languages.has(userEmail) ? { userEmail, language: languages.get(userEmail)! } : { userEmail })),
      ...(rule ? { clearHoldSeconds: rule.clearHoldSeconds, mailIntervalSeconds: rule.mailIntervalSeconds, enabled: rule.enabled } : {}),
    };
    if (rule) await put(`/v1/alarm/rule/${rule.id}`, body);
    else await post(`/v1/alarm/rule?roleId=${role}`, body);
    if (!rule) setName('');
    onSaved();
  });
  if (choices.length === 0) return <p class="muted">Declare the device's series (nodeInfluxSeries, with fields) to create a rule here.</p>;
  return (
    <form onSubmit={(e) => { e.preventDefault(); void save.run(); }} aria-label={rule ? `Edit rule ${rule.name}` : 'New rule'}>
      <h3>{rule ? `Edit rule ${rule.name}` : 'New rule'}</h3>
      <div class="grid-form">
        <TextInput label="Rule name" value={name} onInput={setName} required />
        {rule
          ? <TextInput label="Rule role" value={roles.data?.find((r) => r.id === rule.roleId)?.name ?? `#${rule.roleId}`} onInput={() => {}} readOnly hint="A rule stays with its role" />
          : <Select label="Rule role" value={role} onChange={(v) => { setRoleId(v); setNotify([]); }} options={(roles.data ?? []).map((r) => [String(r.id), r.name])} hint="The role that holds the rule" />}
        <RadioGroup legend="Devices watched" value={scope} onChange={setScope}
          options={[['device', rule?.deviceIds && rule.deviceIds.length > 1 ? `The rule's ${rule.deviceIds.length} devices` : 'This device'], ['role', 'Every device the role monitors']]} />
        {scope === 'role' && <TextInput label="Only devices of nodeType" value={nodeType} onInput={setNodeType} placeholder={String(device.properties.nodeType ?? '')}
          hint="Leave empty to watch every device the role monitors" />}
        <Select label="Series" value={series} onChange={setSeries} options={choices.map((x) => [x.key, x.label])} />
        <Select label="Condition" value={type} onChange={setType} options={[['above', 'Above a value'], ['below', 'Below a value'], ['noData', 'No data for (seconds)']]} />
        <TextInput label={type === 'noData' ? 'Seconds without data' : 'Threshold'} value={value} onInput={setValue} required />
        {type !== 'noData' && <TextInput label="Hysteresis" value={hysteresis} onInput={setHysteresis} inputMode="numeric" hint="How far back past the threshold before the alarm clears" />}
        {type !== 'noData' && <TextInput label="Hold (seconds)" value={hold} onInput={setHold} inputMode="numeric" />}
        <Select label="Severity" value={severity} onChange={setSeverity} options={[['critical', 'Critical'], ['major', 'Major'], ['minor', 'Minor'], ['warning', 'Warning']]} />
        <Recipients roleId={rule ? String(rule.roleId) : role} chosen={notify} onChange={setNotify} />
      </div>
      <ErrorNote error={save.error} context={rule ? 'Saving the rule' : 'Creating the rule'} />
      <div class="row end">
        {onCancel && <button type="button" onClick={onCancel}>Cancel</button>}
        <button type="submit" class="primary" disabled={save.busy}>{rule ? 'Save rule' : 'Create rule'}</button>
      </div>
    </form>
  );
}
