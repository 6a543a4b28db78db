// Public JSON of devices and monitors relations. A stored row never leaves the process as is: toDevice decides, with
// the caller's access from the rights engine, which properties the caller may see.
import { canEditProperty, canReadProperty, type DeviceAccess } from '../access/rights.ts';
import type { DeviceRow } from './devices.store.ts';
import { isoMillis } from '../time-text.ts';
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

/** lastUpdate's text (Date.toISOString's, made faster for listings: see time-text.ts) */
export function isoTime(ms: number): string {
  return isoMillis(ms);
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
 * all fields sees every stored property, so the stored properties text is spliced in as is, and its editabilities are
 * read off the text (editableKeysText): no parse and re-stringify per device. Everyone else goes through toDevice,
 * which picks the readable properties.
 */
export function toDeviceJson(row: DeviceRow, access: DeviceAccess, fields?: ReadonlySet<string>, lastUpdate = isoTime(row.last_update)): string {
  if (!access.monitorManagement || fields) return JSON.stringify(toDevice(row, access, fields));
  return `{"id":${row.id},"lastUpdate":"${lastUpdate}","properties":${row.properties},`
    + `"userRights":{"propertyEditabilities":${editableKeysText(row.properties)},"monitorManagement":true}}`;
}

/**
 * `{"<key>":true,...}` over the top-level keys of a stored properties text, in stored order, without parsing it: the
 * text is scanned for the strings that open a member at depth 1, skipping over string contents. Stored texts are
 * written by JSON.stringify (every write path), so each key's token is already JSON.stringify(key) and is copied as is.
 */
export function editableKeysText(properties: string): string {
  let out = '{';
  let depth = 0;
  let expectKey = false;
  const n = properties.length;
  for (let i = 0; i < n; i++) {
    const c = properties.charCodeAt(i);
    if (c === 34 /* " */) {
      let end = i + 1;
      for (;;) {
        end = properties.indexOf('"', end);
        if (end < 0) throw new SyntaxError('unterminated string in stored properties');
        let slashes = 0;
        while (properties.charCodeAt(end - 1 - slashes) === 92 /* backslash */) slashes++;
        if (slashes % 2 === 0) break;
        end++;
      }
      if (depth === 1 && expectKey) {
        out += `${out.length === 1 ? '' : ','}${properties.slice(i, end + 1)}:true`;
        expectKey = false;
      }
      i = end;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      depth++;
      expectKey = depth === 1;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
    } else if (c === 44 /* , */ && depth === 1) {
      expectKey = true;
    }
  }
  return `${out}}`;
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
