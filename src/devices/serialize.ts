// Public JSON of devices and monitors relations. A stored row never leaves the process as is: toDevice decides, with
// the caller's access from the rights engine, which properties the caller may see.
import { canEditProperty, canReadProperty, type DeviceAccess } from '../access/rights.ts';
import type { DeviceRow } from './devices.store.ts';
import { isoMillis } from '../lib/time-text.ts';
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

/** lastUpdate's text (Date.toISOString's, made faster for listings: see lib/time-text.ts) */
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
 * The JSON text of `toDevice(row, access, fields)`, for large listings, made from the stored properties text without
 * parsing it: every write path stores JSON.stringify's text, so each top-level member's key and value tokens are
 * already what JSON.stringify would write, in the same order, and are copied as they are (see eachTopLevelMember). A
 * caller with monitorManagement who asked for all fields sees every stored property: the whole text is spliced in,
 * and every key is editable (allEditable).
 */
export function toDeviceJson(row: DeviceRow, access: DeviceAccess, fields?: ReadonlySet<string>, lastUpdate = isoTime(row.last_update)): string {
  const text = row.properties;
  if (access.monitorManagement && !fields) {
    return `{"id":${row.id},"lastUpdate":"${lastUpdate}","properties":${text},`
      + `"userRights":{"propertyEditabilities":{${allEditable(text)}},"monitorManagement":true}}`;
  }
  let properties = '';
  let editable = '';
  eachTopLevelMember(text, (keyStart, keyEnd, valueStart, valueEnd) => {
    const token = text.slice(keyStart, keyEnd);
    const key = keyOf(token);
    // '__proto__' cannot be stored (refused at the edge); skipped anyway, as toDevice does
    if (key === '__proto__' || !canReadProperty(access, key) || (fields && !fields.has(key))) return;
    const sep = editable.length === 0 ? '' : ',';
    properties += `${sep}${token}:${text.slice(valueStart, valueEnd)}`;
    editable += `${sep}${token}:${canEditProperty(access, key)}`;
  });
  return `{"id":${row.id},"lastUpdate":"${lastUpdate}","properties":{${properties}},`
    + `"userRights":{"propertyEditabilities":{${editable}},"monitorManagement":${access.monitorManagement}}}`;
}

/**
 * The editabilities of a caller with monitorManagement who sees every property: each top-level key token followed by
 * `:true`, in order ('__proto__' skipped, as toDevice does; JSON.stringify never escapes its letters). One pass over
 * the text without a call per member, since a full editor's listing runs it for every device.
 */
function allEditable(text: string): string {
  let out = '';
  let depth = 0;
  let keyNext = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      const end = stringEnd(text, i);
      if (keyNext && depth === 1) {
        if (end - i !== 10 || !text.startsWith('"__proto__"', i)) out += `${out === '' ? '' : ','}${text.slice(i, end + 1)}:true`;
        keyNext = false;
      }
      i = end;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth === 1) keyNext = true;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
    } else if (c === 44 /* , */ && depth === 1) {
      keyNext = true;
    }
  }
  return out;
}

/** A key token's string: the token without its quotes unless it holds an escape. */
function keyOf(token: string): string {
  return token.includes('\\') ? (JSON.parse(token) as string) : token.slice(1, -1);
}

/**
 * Calls `member` with the bounds of each top-level member of a JSON object text (key token with its quotes, value
 * token), in order, without parsing: the text is scanned for depth, with string contents skipped whole.
 */
export function eachTopLevelMember(text: string, member: (keyStart: number, keyEnd: number, valueStart: number, valueEnd: number) => void): void {
  let depth = 0;
  let keyStart = -1;
  let keyEnd = -1;
  let valueStart = -1;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      const end = stringEnd(text, i);
      if (depth === 1 && keyStart < 0) {
        keyStart = i;
        keyEnd = end + 1;
      }
      i = end;
    } else if (c === 58 /* : */ && depth === 1) {
      valueStart = i + 1;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      depth++;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      if (depth === 1 && keyStart >= 0) member(keyStart, keyEnd, valueStart, i);
      depth--;
    } else if (c === 44 /* , */ && depth === 1) {
      member(keyStart, keyEnd, valueStart, i);
      keyStart = -1;
    }
  }
}

/** The index of the quote that closes the string opened at `open`. */
function stringEnd(text: string, open: number): number {
  let end = open + 1;
  for (;;) {
    end = text.indexOf('"', end);
    if (end < 0) throw new SyntaxError('unterminated string in stored properties');
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === 92 /* backslash */) slashes++;
    if (slashes % 2 === 0) return end;
    end++;
  }
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
