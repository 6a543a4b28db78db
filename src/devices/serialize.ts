// Public JSON of devices and monitors relations. A stored row never leaves the process as is: toDevice decides, with
// the caller's access from the rights engine, which properties the caller may see.
import { canEditProperty, canReadProperty, type DeviceAccess } from '../access/rights.ts';
import type { DeviceRow } from './devices.store.ts';
import type { MonitorsRow } from './monitors.store.ts';

export interface Device {
  id: number;
  lastUpdate: string;
  properties: Record<string, unknown>;
  userRights: { propertyEditabilities: Record<string, boolean>; monitorManagement: boolean };
}

export interface Monitors {
  id: number;
  roleId: number;
  deviceId: number;
  monitorManagement: boolean;
  reads: string[];
  edits: string[];
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * The device as the caller may see it: only readable properties (further limited to `fields` when given), one
 * editability entry per returned property. `properties` may be passed when the caller already parsed the row.
 */
export function toDevice(row: DeviceRow, access: DeviceAccess, fields?: ReadonlySet<string>, properties?: Record<string, unknown>): Device {
  const all = properties ?? (JSON.parse(row.properties) as Record<string, unknown>);
  const visible: Record<string, unknown> = {};
  const editable: Record<string, boolean> = {};
  for (const key of Object.keys(all)) {
    // '__proto__' cannot be stored (refused at the edge); skipped anyway so an assignment can never set a prototype
    if (key === '__proto__' || !canReadProperty(access, key) || (fields && !fields.has(key))) continue;
    visible[key] = all[key];
    editable[key] = canEditProperty(access, key);
  }
  return {
    id: row.id,
    lastUpdate: isoTime(row.last_update),
    properties: visible,
    userRights: { propertyEditabilities: editable, monitorManagement: access.monitorManagement },
  };
}

/**
 * The JSON text of `toDevice(row, access, fields)`, for large listings. A caller with monitorManagement who asked for
 * all fields sees every stored property, so the stored properties text is spliced in as is: no parse and re-stringify
 * per device. `allEditable` is `{"<key>":true,...}` over the stored top-level keys in stored order (see listDevices).
 * Everyone else goes through toDevice, which picks the readable properties.
 */
export function toDeviceJson(row: DeviceRow, access: DeviceAccess, allEditable: string, fields?: ReadonlySet<string>, lastUpdate = isoTime(row.last_update)): string {
  if (!access.monitorManagement || fields) return JSON.stringify(toDevice(row, access, fields));
  return `{"id":${row.id},"lastUpdate":"${lastUpdate}","properties":${row.properties},`
    + `"userRights":{"propertyEditabilities":${allEditable},"monitorManagement":true}}`;
}

export function toMonitors(row: MonitorsRow): Monitors {
  return {
    id: row.id,
    roleId: row.role_id,
    deviceId: row.device_id,
    monitorManagement: row.monitor_management === 1,
    reads: JSON.parse(row.reads) as string[],
    edits: JSON.parse(row.edits) as string[],
  };
}
