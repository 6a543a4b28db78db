// POST /v1/device/query and its deprecated GET: the devices u may read, filtered, paginated, serialized.
//
// Security: every filter and condition is evaluated on what the caller may READ. A device whose property is not
// readable never matches a filter or condition on that property, whatever its value, so the answer to a query can
// never depend on (and thus reveal) a hidden value.
import { createHash } from 'node:crypto';
import type { Db } from '../db/open.ts';
import { canReadProperty, readableDevices, type DeviceAccess } from '../access/rights.ts';
import { findDevices } from './devices.store.ts';
import { toDevice, type Device } from './serialize.ts';
import { jsonEqual } from './patch.ts';

export interface DeviceQuery {
  filter?: { id?: number[]; nodeId?: string[]; nodeType?: string[]; isActive?: boolean };
  conditions?: Record<string, unknown[]>;
  fields?: string[];
  limit?: number;
  afterId?: number;
}

export interface DeviceQueryResult {
  devices: Device[];
  /** base64 SHA-256 over the lastUpdate strings of the selected devices in id order, joined with "\n" */
  hash: string;
}

// rows are fetched and parsed in slices, so a small `limit` over a large visible set stops early
const SLICE = 2000;

export function queryDevices(db: Db, userId: number, query: DeviceQuery): DeviceQueryResult {
  const filter = query.filter ?? {};
  const afterId = query.afterId ?? -1;
  const limit = query.limit ?? Infinity;
  const fields = query.fields ? new Set(query.fields) : undefined;
  const conditions = Object.entries(query.conditions ?? {});
  const accesses = readableDevices(db, userId, filter.id).filter((a) => a.deviceId > afterId);

  const devices: Device[] = [];
  for (let at = 0; at < accesses.length && devices.length < limit; at += SLICE) {
    const slice = accesses.slice(at, at + SLICE);
    const byId = new Map<number, DeviceAccess>(slice.map((a) => [a.deviceId, a]));
    // the SQL pre-filter on the generated columns only narrows; readability is checked below, per device
    const rows = findDevices(db, slice.map((a) => a.deviceId), { nodeId: filter.nodeId, nodeType: filter.nodeType });
    for (const row of rows) {
      const access = byId.get(row.id)!;
      const properties = JSON.parse(row.properties) as Record<string, unknown>;
      const readable = (key: string) => canReadProperty(access, key) && Object.hasOwn(properties, key);
      if (filter.nodeId && !(readable('nodeId') && filter.nodeId.includes(properties.nodeId as string))) continue;
      if (filter.nodeType && !(readable('nodeType') && filter.nodeType.includes(properties.nodeType as string))) continue;
      if (filter.isActive !== undefined && !(readable('isActive') && properties.isActive === filter.isActive)) continue;
      if (!conditions.every(([key, values]) => readable(key) && values.some((value) => jsonEqual(properties[key], value)))) continue;
      devices.push(toDevice(row, access, fields, properties));
      if (devices.length >= limit) break;
    }
  }
  return { devices, hash: lastUpdateHash(devices) };
}

export function lastUpdateHash(devices: readonly Device[]): string {
  return createHash('sha256').update(devices.map((d) => d.lastUpdate).join('\n')).digest('base64');
}
