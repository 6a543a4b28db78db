// What a subscription receives of an event: `{ id, type, time, installation, subject: { kind, id }, data }`, only when
// its role may read what the event is about, now (src/access/subscribers.ts); a device event keeps only the
// properties the role may read, and is not sent at all when none is left.
import { canReadProperty, type DeviceAccess } from '../access/rights.ts';
import type { SubscriberRights } from '../access/subscribers.ts';
import type { EventRow } from './events.store.ts';

export interface Envelope {
  id: string;
  type: string;
  time: string;
  installation: string;
  subject: { kind: string; id: number | string | null };
  data: Record<string, unknown>;
}

/** A subject's id as sent: a number when it is one. */
export const subjectId = (id: string | null): number | string | null => (id !== null && /^\d{1,15}$/.test(id) ? Number(id) : id);

/** The event as the subscription's role may see it, or undefined when it may see none of it. */
export function envelopeFor(event: EventRow, rights: SubscriberRights, installation: string): Envelope | undefined {
  const data = visibleData(event, rights);
  if (data === undefined) return undefined;
  return {
    id: event.uid, type: event.type, time: new Date(event.at).toISOString(), installation,
    subject: { kind: event.subject_kind, id: subjectId(event.subject_id) }, data,
  };
}

/**
 * The envelope as sent, JSON text, or undefined when the role may see none of the event. Where the role sees all of
 * the data, the stored text goes in as it is (no parse and serialization of it per delivery).
 */
export function envelopeBody(event: EventRow, rights: SubscriberRights, installation: string): string | undefined {
  const seen = visibility(event, rights);
  if (seen === 'none') return undefined;
  const data = seen === 'all' ? event.data : JSON.stringify(seen.filter(JSON.parse(event.data) as Record<string, unknown>) ?? null);
  if (data === 'null') return undefined;
  const head = JSON.stringify({
    id: event.uid, type: event.type, time: new Date(event.at).toISOString(), installation,
    subject: { kind: event.subject_kind, id: subjectId(event.subject_id) },
  });
  return `${head.slice(0, -1)},"data":${data}}`;
}

type Visibility = 'all' | 'none' | { filter: (data: Record<string, unknown>) => Record<string, unknown> | undefined };

function visibleData(event: EventRow, rights: SubscriberRights): Record<string, unknown> | undefined {
  const seen = visibility(event, rights);
  if (seen === 'none') return undefined;
  const data = JSON.parse(event.data) as Record<string, unknown>;
  return seen === 'all' ? data : seen.filter(data);
}

/** How much of the event the role sees: all of it, none, or the device properties it may read (a filter of the data). */
function visibility(event: EventRow, rights: SubscriberRights): Visibility {
  if (rights.root) return 'all';
  const seenIf = (yes: boolean): Visibility => (yes ? 'all' : 'none');
  switch (event.audience) {
    case 'root': return 'none';
    case 'role': return seenIf(event.role_id !== null && rights.reach.has(event.role_id));
    case 'member': return seenIf(event.role_id !== null && rights.members.has(event.role_id));
    case 'license': return seenIf(event.subject_id !== null && rights.licenses.has(event.subject_id));
    case 'device': {
      const access = event.device_id === null ? undefined : rights.devices.get(event.device_id);
      if (!access?.canRead) return 'none';
      if (access.monitorManagement) return 'all';
      return { filter: (data) => readableData(data, access) };
    }
  }
}

/** A device event's data with only the properties the role may read; undefined when none is left. */
function readableData(data: Record<string, unknown>, access: DeviceAccess): Record<string, unknown> | undefined {
  const readable = (name: string) => canReadProperty(access, name);
  if (Array.isArray(data.changed)) {
    const changed = (data.changed as string[]).filter(readable);
    return changed.length > 0 ? { ...data, changed } : undefined;
  }
  const changes = Object.entries((data.changes ?? {}) as Record<string, unknown>).filter(([name]) => readable(name));
  return changes.length > 0 ? { ...data, changes: Object.fromEntries(changes) } : undefined;
}

/** The devices and licenses a batch of events is about: what the rights of its subscription must be asked for. */
export function subjectsOf(events: readonly EventRow[]): { deviceIds: number[]; licenseIds: string[] } {
  const deviceIds = new Set<number>();
  const licenseIds = new Set<string>();
  for (const e of events) {
    if (e.audience === 'device' && e.device_id !== null) deviceIds.add(e.device_id);
    if (e.audience === 'license' && e.subject_id !== null) licenseIds.add(e.subject_id);
  }
  return { deviceIds: [...deviceIds], licenseIds: [...licenseIds] };
}
