// The events of audited changes: every audit entry about the installation's data (roles, relations, members,
// devices, monitors, licenses, customers) becomes one event, and deletions that took other objects with them add one
// event per object taken. Sign-ins, token refreshes, second-factor steps and users' own settings are not events.
import type { AuditInsert } from '../db/schema.ts';
import type { EventDraft } from './event-types.ts';

type Changes = Record<string, unknown>;

/** created when no field has a `before`: the audit's diff of nothing against the new object */
function isCreation(changes: Changes): boolean {
  return Object.values(changes).every((c) => typeof c !== 'object' || c === null || !Object.hasOwn(c, 'before'));
}

const num = (v: string | number | null): number | null => (v === null ? null : Number(v));

/** One event per entry (plus those of a cascade); none for an action that is not about the installation's data. */
export function eventsOfAudit(row: AuditInsert): EventDraft[] {
  const changes = JSON.parse(row.changes) as Changes;
  const base = { at: row.at, subjectId: row.target_id, roleId: row.role_id, deviceId: row.device_id, data: { changes } };
  const one = (type: string, subject: string, audience: EventDraft['audience']): EventDraft[] => [{ ...base, type, subject, audience }];
  switch (row.action) {
    case 'role.create': return one('role.created', 'role', 'role');
    case 'role.update': return one('role.updated', 'role', 'role');
    case 'manages.put': return one(isCreation(changes) ? 'role.manages.created' : 'role.manages.updated', 'manages', 'role');
    case 'manages.delete': return [...one('role.manages.deleted', 'manages', 'role'), ...cascade(row, changes.cascade)];
    case 'member.put': return one('role.member.created', 'member', 'member');
    case 'member.delete': return one('role.member.deleted', 'member', 'member');
    case 'device.create': return one('device.created', 'device', 'device');
    case 'device.patch':
    case 'device.put': return one('device.updated', 'device', 'device');
    case 'monitors.put': return one(isCreation(changes) ? 'monitors.created' : 'monitors.updated', 'monitors', 'role');
    case 'monitors.delete': {
      const gone = typeof changes.deviceDeleted === 'number' ? [deletion(row, 'device.deleted', 'device', changes.deviceDeleted, { kind: 'monitors', id: num(row.target_id) })] : [];
      return [...one('monitors.deleted', 'monitors', 'role'), ...gone];
    }
    case 'license.create': return one('license.created', 'license', 'license');
    case 'license.activate': return one('license.activated', 'license', 'license');
    case 'license.claim': return one('license.claimed', 'license', 'license');
    case 'customer.create': return one('customer.created', 'customer', 'role');
    case 'order.create': return one('customer.order.created', 'order', 'role');
    default: return [];
  }
}

/** role.deleted and device.deleted for what a manages relation's deletion took with it; seen by those who reach its parent. */
function cascade(row: AuditInsert, taken: unknown): EventDraft[] {
  const c = (taken ?? {}) as { roles?: number[]; devices?: number[] };
  const via = { kind: 'manages', id: num(row.target_id) };
  return [
    ...(c.roles ?? []).map((id) => deletion(row, 'role.deleted', 'role', id, via)),
    ...(c.devices ?? []).map((id) => deletion(row, 'device.deleted', 'device', id, via)),
  ];
}

function deletion(row: AuditInsert, type: string, subject: string, id: number, via: { kind: string; id: number | null }): EventDraft {
  // the subject is gone: who may hear of it is decided by the role the deletion was made through, which remains
  return { at: row.at, type, subject, subjectId: String(id), audience: 'role', roleId: row.role_id, deviceId: null, data: { via } };
}
