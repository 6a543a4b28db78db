// The telemetry rules of contract §7.2/§7.3, answered by the rights engine. Data is authorized by its `nodeId` tag:
// the device whose properties.nodeId equals it. A nodeId that belongs to no device is unauthorized.
// Callers ask once per distinct nodeId per request (NodeRights caches the answers for one request only: rights may
// change between requests).
import type { Db } from '../db/open.ts';
import { canEditProperty, deviceAccess, type DeviceAccess } from '../access/rights.ts';

/** The device property whose edit right also allows writing the device's telemetry. */
export const TELEMETRY_PROPERTY = 'nodeInfluxSeries';

function accessByNodeId(db: Db, userId: number, nodeId: string): DeviceAccess | undefined {
  const deviceId = db.prepare('SELECT id FROM devices WHERE node_id = ?').pluck().get(nodeId) as number | undefined;
  return deviceId === undefined ? undefined : deviceAccess(db, userId, deviceId);
}

/** Write: monitorManagement on the device, or its `nodeInfluxSeries` property editable. */
export function mayWriteNode(db: Db, userId: number, nodeId: string): boolean {
  const access = accessByNodeId(db, userId, nodeId);
  return access !== undefined && canEditProperty(access, TELEMETRY_PROPERTY);
}

/** Query: read access to the device. */
export function mayReadNode(db: Db, userId: number, nodeId: string): boolean {
  return accessByNodeId(db, userId, nodeId)?.canRead === true;
}

/** Answers of one request, one rights check per distinct nodeId. */
export class NodeRights {
  private readonly answers = new Map<string, boolean>();
  constructor(private readonly db: Db, private readonly userId: number, private readonly rule: typeof mayReadNode) {}

  allows(nodeId: string): boolean {
    let ok = this.answers.get(nodeId);
    if (ok === undefined) this.answers.set(nodeId, (ok = this.rule(this.db, this.userId, nodeId)));
    return ok;
  }
}
