// The telemetry rules of docs/api.md#telemetry-write and #telemetry-query, answered by the rights engine. Data is authorized by its `nodeId` tag:
// the device whose properties.nodeId equals it. A nodeId that belongs to no device is unauthorized.
// A request's distinct nodeIds are checked together, once each: rights may change between requests, never within one.
// These are shared rules (src/access), asynchronous: the telemetry engine awaits them before (or between) its
// synchronous exclusive sections, never inside one.
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { canEditProperty, deviceAccesses, type DeviceAccess } from '../access/rights.ts';
import { devicesOfNodeIds, rootAndDevicesOfNodeIds } from './telemetry.store.ts';

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
export async function nodeRights(db: Db, userId: number, nodeIds: Iterable<string>, rule: NodeRule): Promise<Map<string, boolean>> {
  const wanted = [...new Set(nodeIds)];
  if (wanted.length === 0) return new Map();
  return rightsOfDevices(db, userId, wanted, await devicesOfNodeIds(db, wanted), rule);
}

/** nodeRights over the devices of `wanted` already read. */
async function rightsOfDevices(db: Db, userId: number, wanted: readonly string[], devices: Awaited<ReturnType<typeof devicesOfNodeIds>>,
  rule: NodeRule): Promise<Map<string, boolean>> {
  const out = new Map<string, boolean>(wanted.map((n) => [n, false]));
  if (devices.length === 0) return out;
  const accessById = await deviceAccesses(db, userId, devices.map((d) => d.id), PER_DEVICE_WALKS, devices[0]!.rights_version);
  for (const d of devices) out.set(d.node_id, holds(accessById.get(d.id), rule));
  return out;
}

/** A write's rule: every nodeId it carries must be writable by the user; else 403 naming the first that is not. */
export async function requireTelemetryWrite(db: Db, userId: number, nodeIds: Set<string>): Promise<void> {
  const allowed = await nodeRights(db, userId, nodeIds, 'write');
  const forbidden = [...nodeIds].find((n) => !allowed.get(n));
  if (forbidden !== undefined) {
    throw new ApiError('FORBIDDEN', `no right to write telemetry of nodeId ${JSON.stringify(forbidden)} `
      + `(needs monitorManagement on its device, or the ${TELEMETRY_PROPERTY} property editable); nothing was stored`);
  }
}

/**
 * The nodeIds among `nodeIds` whose telemetry the user may read: members of the root role read every series (also
 * those whose nodeId names no device); everyone else what nodeRights(…, 'read') allows.
 */
export async function readableNodeIds(db: Db, userId: number, nodeIds: Iterable<string>): Promise<Set<string>> {
  const wanted = [...new Set(nodeIds)];
  if (wanted.length === 0) return new Set();
  const { root, devices } = await rootAndDevicesOfNodeIds(db, userId, wanted);
  if (root) return new Set(wanted);
  const out = new Set<string>();
  for (const [nodeId, ok] of await rightsOfDevices(db, userId, wanted, devices, 'read')) if (ok) out.add(nodeId);
  return out;
}
