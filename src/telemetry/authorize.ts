// The telemetry rules of docs/api.md#telemetry-write and #telemetry-query, answered by the rights engine. Data is authorized by its `nodeId` tag:
// the device whose properties.nodeId equals it. A nodeId that belongs to no device is unauthorized.
// A request's distinct nodeIds are checked together, once each: rights may change between requests, never within one.
import type { Db } from '../db/open.ts';
import { canEditProperty, deviceAccess, readableDevices, type DeviceAccess } from '../access/rights.ts';
import { inJson, listParam } from '../db/in-list.ts';
import { isRootMember } from '../access/root.ts';

/** The device property whose edit right also allows writing the device's telemetry. */
export const TELEMETRY_PROPERTY = 'nodeInfluxSeries';

// Up to this many devices, one upward walk per device beats one downward walk over everything the user reaches
// (the same trade-off as src/devices/authorize.ts).
const PER_DEVICE_WALKS = 4;

export type NodeRule = 'read' | 'write';

/** Whether the rule holds for one device's access: write = monitorManagement or nodeInfluxSeries editable. */
function holds(access: DeviceAccess | undefined, rule: NodeRule): boolean {
  if (access === undefined || !access.canRead) return false;
  return rule === 'read' || canEditProperty(access, TELEMETRY_PROPERTY);
}

/** For each distinct nodeId, whether the user may read (query) or write its telemetry. */
export function nodeRights(db: Db, userId: number, nodeIds: Iterable<string>, rule: NodeRule): Map<string, boolean> {
  const wanted = [...new Set(nodeIds)];
  const out = new Map<string, boolean>(wanted.map((n) => [n, false]));
  if (wanted.length === 0) return out;
  const devices = (wanted.length === 1
    ? db.prepare('SELECT id, node_id FROM devices WHERE node_id = ?').all(wanted[0])
    : db.prepare(`SELECT id, node_id FROM devices WHERE node_id ${inJson()}`).all(listParam(wanted))) as Array<{ id: number; node_id: string }>;
  if (devices.length === 0) return out;
  const accessById = new Map<number, DeviceAccess>();
  if (devices.length <= PER_DEVICE_WALKS) for (const d of devices) accessById.set(d.id, deviceAccess(db, userId, d.id));
  else for (const a of readableDevices(db, userId, devices.map((d) => d.id))) accessById.set(a.deviceId, a);
  for (const d of devices) out.set(d.node_id, holds(accessById.get(d.id), rule));
  return out;
}

/**
 * The nodeIds among `nodeIds` whose telemetry the user may read: members of the root role read every series (also
 * those whose nodeId names no device); everyone else what nodeRights(…, 'read') allows.
 */
export function readableNodeIds(db: Db, userId: number, nodeIds: Iterable<string>): Set<string> {
  if (isRootMember(db, userId)) return new Set(nodeIds);
  const out = new Set<string>();
  for (const [nodeId, ok] of nodeRights(db, userId, nodeIds, 'read')) if (ok) out.add(nodeId);
  return out;
}
