// The one list of event types (docs/api.md#event-types). A domain that emits events defines its types here with
// defineEventTypes, once, when its module loads; the API's type filters, the OpenAPI document and the delivery's
// audience check all read this registry. Names are `noun.verb` (`role.manages.updated`), lower case, each part
// [a-z0-9_] as the Standard Webhooks specification recommends.

/**
 * Who may receive an event, decided at delivery time for the subscription's role (src/access/subscribers.ts):
 * - role: the event's role is in the subscription role's reach;
 * - member: the subscription's role holds userManagement over the event's role;
 * - device: the role may read the event's device; `data.changes` keeps only the properties it may read;
 * - license: the license is linked to a controller the role may read;
 * - root: the root role only.
 * A subscription of the root role receives every event.
 */
export type Audience = 'role' | 'member' | 'device' | 'license' | 'root';

export interface EventType {
  type: string;
  /** the kind of the event's subject ({ kind, id }) */
  subject: string;
  audience: Audience;
  summary: string;
}

/** An event before it is stored (src/events/outbox.ts writes it). */
export interface EventDraft {
  type: string;
  at: number;
  subject: string;
  subjectId: string | null;
  audience: Audience;
  roleId: number | null;
  deviceId: number | null;
  data: Record<string, unknown>;
}

const TYPE_NAME = /^[a-z0-9_]+(?:\.[a-z0-9_]+)+$/;
const registry = new Map<string, EventType>();

/** Adds event types to the registry; a name defined twice is a programming error. */
export function defineEventTypes(types: readonly EventType[]): void {
  for (const t of types) {
    if (!TYPE_NAME.test(t.type)) throw new Error(`event type ${t.type}: expected noun.verb in [a-z0-9_]`);
    if (registry.has(t.type)) throw new Error(`event type ${t.type} is defined twice`);
    registry.set(t.type, t);
  }
}

export function eventType(type: string): EventType | undefined {
  return registry.get(type);
}

/** Every defined type, by name. */
export function eventTypes(): EventType[] {
  return [...registry.values()].sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
}

/**
 * A subscription's filter entry: an event type, a prefix ending in `.*` (`device.*`, `role.manages.*`) or `*`.
 * True when it names a defined type or matches at least one.
 */
export function isTypeFilter(entry: string): boolean {
  if (entry === '*') return true;
  if (entry.endsWith('.*')) {
    const prefix = entry.slice(0, -1);
    return [...registry.keys()].some((t) => t.startsWith(prefix));
  }
  return registry.has(entry);
}

/** The filter entries that select `type`: itself, each of its prefixes with `.*`, and `*` (the fan-out's lookup). */
export function filtersSelecting(type: string): string[] {
  const parts = type.split('.');
  const out = [type];
  for (let i = parts.length - 1; i > 0; i--) out.push(`${parts.slice(0, i).join('.')}.*`);
  out.push('*');
  return out;
}

/** The entries of a filter that no other entry covers (`*` covers all, `device.*` covers `device.updated`), once each. */
export function minimalFilters(entries: readonly string[]): string[] {
  const unique = [...new Set(entries)];
  return unique.filter((e) => !filtersSelecting(e.endsWith('.*') ? e.slice(0, -2) : e).some((f) => f !== e && unique.includes(f)));
}

/** The types of the changes the audit log records (src/events/from-audit.ts maps its actions to them). */
defineEventTypes([
  { type: 'role.created', subject: 'role', audience: 'role', summary: 'A role was created (visible to those who reach its parent).' },
  { type: 'role.updated', subject: 'role', audience: 'role', summary: 'A role was renamed, or its selfRights, join password or company mark changed.' },
  { type: 'role.deleted', subject: 'role', audience: 'role', summary: 'A role went in the cascade of a deleted manages relation (visible to those who reach the relation\'s parent).' },
  { type: 'role.manages.created', subject: 'manages', audience: 'role', summary: 'A manages relation was created.' },
  { type: 'role.manages.updated', subject: 'manages', audience: 'role', summary: 'The flags of a manages relation changed.' },
  { type: 'role.manages.deleted', subject: 'manages', audience: 'role', summary: 'A manages relation was deleted; data.changes.cascade lists what went with it.' },
  { type: 'role.member.created', subject: 'member', audience: 'member', summary: 'A user was made a member of a role.' },
  { type: 'role.member.deleted', subject: 'member', audience: 'member', summary: 'A member relation was deleted.' },
  { type: 'device.created', subject: 'device', audience: 'device', summary: 'A device was created; data.changes holds its readable properties.' },
  { type: 'device.updated', subject: 'device', audience: 'device', summary: 'Properties of a device changed (PATCH or PUT); data.changes holds the readable ones, before and after.' },
  { type: 'device.deleted', subject: 'device', audience: 'role', summary: 'A device went with its last monitors relation with monitorManagement, or in a role cascade.' },
  { type: 'monitors.created', subject: 'monitors', audience: 'role', summary: 'A monitors relation was created.' },
  { type: 'monitors.updated', subject: 'monitors', audience: 'role', summary: 'A monitors relation changed.' },
  { type: 'monitors.deleted', subject: 'monitors', audience: 'role', summary: 'A monitors relation was deleted.' },
  { type: 'license.created', subject: 'license', audience: 'license', summary: 'A license was created (API or `license create`).' },
  { type: 'license.activated', subject: 'license', audience: 'license', summary: 'A license was activated.' },
  { type: 'license.claimed', subject: 'license', audience: 'license', summary: 'A license was linked to a controller.' },
  { type: 'customer.created', subject: 'customer', audience: 'role', summary: 'A customer was created.' },
  { type: 'customer.order.created', subject: 'order', audience: 'role', summary: 'An order handed licenses to a customer.' },
  { type: 'subscription.tested', subject: 'subscription', audience: 'role', summary: 'A test event, sent to one subscription on request; never fanned out.' },
]);

/** Alarm transitions (src/alarms/): seen by subscriptions whose role reaches the rule's role (which may read the device). */
defineEventTypes([
  { type: 'alarm.raised', subject: 'alarm', audience: 'role', summary: 'A rule raised an alarm on a device; data.alarm is the alarm.' },
  { type: 'alarm.acknowledged', subject: 'alarm', audience: 'role', summary: 'An alarm was acknowledged; data.alarm is the alarm.' },
  { type: 'alarm.cleared', subject: 'alarm', audience: 'role', summary: 'An alarm was cleared, by its rule or by hand; data.alarm is the alarm.' },
]);
