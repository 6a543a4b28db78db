// POST /v1/device/query and its deprecated GET: the devices u may read, filtered, paginated, serialized.
//
// Security: every filter and condition is evaluated on what the caller may READ. A device whose property is not
// readable never matches a filter or condition on that property, whatever its value, so the answer to a query can
// never depend on (and thus reveal) a hidden value.
//
// `selectDevices` decides which devices are returned and yields the skipHash; `devicesJson` serializes them. With a
// skipHash the selection reads ids and lastUpdate only (plus the values conditions need), so a client polling with an
// unchanged hash gets its 204 without any device being read in full or serialized.
import { createHash } from 'node:crypto';
import type { Db } from '../db/open.ts';
import { canReadProperty, readableDevices, type DeviceAccess } from '../access/rights.ts';
import { devicesMonitoredByCompanies, visibleCompanyIds } from '../access/companies.ts';
import { listDevices, scanDevices, type DeviceListRow } from './devices.store.ts';
import { isoTime, toDeviceJson } from './serialize.ts';
import { jsonEqual } from './patch.ts';

export interface DeviceQuery {
  filter?: { id?: number[]; nodeId?: string[]; nodeType?: string[]; isActive?: boolean; companyId?: number[] };
  /** the Eniris body also takes companyId at the top level; given in both places, both must hold */
  companyId?: number[];
  conditions?: Record<string, unknown[]>;
  fields?: string[];
  limit?: number;
  afterId?: number;
}

export interface Selection {
  /** `row` is already read in full unless the selection was made for a skipHash comparison */
  devices: { access: DeviceAccess; lastUpdate: string; row?: DeviceListRow }[];
  /** base64 SHA-256 over the lastUpdate strings of the selected devices in id order, joined with "\n" */
  hash: string;
}

// rows are read in slices, so a small `limit` over a large visible set stops early: the first slice is about twice the
// limit (filters and conditions may skip some), the next ones double, up to SLICE
const SLICE = 2000;
const FIRST_SLICE_MIN = 64;

export async function selectDevices(db: Db, userId: number, query: DeviceQuery, forSkipHash = false): Promise<Selection> {
  const filter = query.filter ?? {};
  const afterId = query.afterId ?? -1;
  const limit = query.limit ?? Infinity;
  const conditions = Object.entries(query.conditions ?? {});
  // companyId narrows the id set before rights are resolved: only companies u can see count (another one filters to
  // nothing, exactly like a company that does not exist), and readability is still decided by readableDevices
  let onlyIds = filter.id;
  for (const companyIds of [query.companyId, filter.companyId]) {
    if (companyIds === undefined) continue;
    const monitored = await devicesMonitoredByCompanies(db, await visibleCompanyIds(db, userId, companyIds));
    onlyIds = onlyIds ? onlyIds.filter((id) => monitored.has(id)) : [...monitored];
  }
  const accesses = await readableDevices(db, userId, onlyIds, afterId);
  // the well-known filters run in SQL on the stored values; readability is checked here, per device
  const filtered = (['nodeId', 'nodeType', 'isActive'] as const).filter((key) => filter[key] !== undefined);
  const mode = !forSkipHash ? 'listing' : conditions.length > 0 ? 'properties' : 'times';

  const devices: Selection['devices'] = [];
  let size = Number.isFinite(limit) ? Math.min(SLICE, Math.max(FIRST_SLICE_MIN, 2 * limit)) : SLICE;
  for (let at = 0; at < accesses.length && devices.length < limit; at += size, size = Math.min(SLICE, 2 * size)) {
    const slice = accesses.slice(at, at + size);
    const byId = new Map<number, DeviceAccess>(slice.map((a) => [a.deviceId, a]));
    const rows = await scanDevices(db, slice.map((a) => a.deviceId), filter, mode);
    for (const row of rows) {
      const access = byId.get(row.id)!;
      if (!filtered.every((key) => canReadProperty(access, key))) continue;
      if (conditions.length > 0) {
        const properties = JSON.parse(row.properties!) as Record<string, unknown>;
        const matches = ([key, values]: [string, unknown[]]) =>
          canReadProperty(access, key) && Object.hasOwn(properties, key) && values.some((value) => jsonEqual(properties[key], value));
        if (!conditions.every(matches)) continue;
      }
      devices.push({ access, lastUpdate: isoTime(row.last_update), ...(mode === 'listing' ? { row: row as DeviceListRow } : {}) });
      if (devices.length >= limit) break;
    }
  }
  return { devices, hash: lastUpdateHash(devices.map((d) => d.lastUpdate)) };
}

/** The response body `{ device: Device[] }` as JSON text; large listings are assembled as text (see toDeviceJson). */
export async function devicesJson(db: Db, selection: Selection, fields?: readonly string[]): Promise<string> {
  const only = fields ? new Set(fields) : undefined;
  const parts: string[] = [];
  for (let at = 0; at < selection.devices.length; at += SLICE) {
    const slice = selection.devices.slice(at, at + SLICE);
    // selection and serialization run in one transaction (the caller's `db` is its handle): no write comes between them
    const missing = slice.filter((d) => !d.row).map((d) => d.access.deviceId);
    const read = new Map(missing.length > 0 ? (await listDevices(db, missing)).map((row) => [row.id, row]) : []);
    for (const { access, lastUpdate, row } of slice) {
      const full = row ?? read.get(access.deviceId)!;
      parts.push(toDeviceJson(full, access, full.all_editable, only, lastUpdate));
    }
  }
  return `{"device":[${parts.join(',')}]}`;
}

export function lastUpdateHash(lastUpdates: readonly string[]): string {
  return createHash('sha256').update(lastUpdates.join('\n')).digest('base64');
}
