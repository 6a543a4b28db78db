// Device writes, each one synchronous IMMEDIATE transaction: the precondition check, the change and the write cannot
// interleave with another request, so of N writers racing with the same If-Unmodified-Since exactly one wins.
// Rights are checked by the caller (authorize.ts) before these run.
import type { Db } from '../db/open.ts';
import { canReadProperty, deviceAccess, type DeviceAccess } from '../access/rights.ts';
import { ApiError } from '../http/errors.ts';
import { findDevice, findDevices, insertDevice, nextLastUpdate, nodeIdHolder, updateDeviceProperties, type DeviceRow } from './devices.store.ts';
import { upsertMonitors } from './monitors.store.ts';
import { validateProperties } from './node-types.ts';
import { applyPatch, type PatchOp } from './patch.ts';
import { applyPut, putTouchedProperties, type PutMode } from './put-modes.ts';
import { toDevice, toMonitors, type Device, type Monitors } from './serialize.ts';
import { wellKnownProblem } from './well-known.ts';

export interface WriteOptions {
  now: number;
  validate: boolean;
  /** If-Unmodified-Since in Unix ms: any target updated later -> 412, nothing written */
  unmodifiedSince?: number;
  /** called in the same transaction for each device whose properties changed (the audit entry) */
  onChange?: (deviceId: number, before: Properties, after: Properties) => void;
}

type Properties = Record<string, unknown>;

export function createDevice(db: Db, userId: number, roleId: number, properties: Properties, opts: Omit<WriteOptions, 'unmodifiedSince' | 'onChange'>): { monitors: Monitors; device: Device } {
  return db.tx(() => {
    if (opts.validate) requireSchema(properties);
    requireFreeNodeId(db, properties);
    const row = insertDevice(db, JSON.stringify(properties), opts.now);
    const monitors = upsertMonitors(db, roleId, row.id, { monitorManagement: true, reads: [], edits: [] });
    return { monitors: toMonitors(monitors), device: toDevice(row, deviceAccess(db, userId, row.id), undefined, properties) };
  });
}

export function patchDevices(db: Db, targets: readonly DeviceAccess[], ops: readonly PatchOp[], touched: ReadonlySet<string>, opts: WriteOptions): Device[] {
  return writeDevices(db, targets, opts, (current, access) => {
    const result = applyPatch(current, ops, access.deviceId);
    if (!result.ok) throw new ApiError('PATCH_FAILED', result.message);
    return { next: result.properties, touched };
  });
}

export function putDevices(db: Db, targets: readonly DeviceAccess[], incoming: Properties, mode: PutMode, opts: WriteOptions): Device[] {
  return writeDevices(db, targets, opts, (current) => {
    const result = applyPut(current, incoming, mode);
    if (!result.ok) throw new ApiError('BAD_REQUEST', `properties${result.path ? `.${result.path}` : ''}: ${result.message}`);
    return { next: result.properties, touched: putTouchedProperties(current, incoming, mode) };
  });
}

type Change = (current: Properties, access: DeviceAccess) => { next: Properties; touched: ReadonlySet<string> };

/** 412 for all targets first, then each change in request order; any failure rolls the whole request back. */
function writeDevices(db: Db, targets: readonly DeviceAccess[], opts: WriteOptions, change: Change): Device[] {
  return db.tx(() => {
    const ids = targets.map((t) => t.deviceId);
    const found = ids.length === 1 ? [findDevice(db, ids[0])!] : findDevices(db, ids);
    const rows = new Map(found.map((row) => [row.id, row]));
    const since = opts.unmodifiedSince;
    if (since !== undefined && targets.some((t) => rows.get(t.deviceId)!.last_update > since)) {
      throw new ApiError('DEVICE_MODIFIED', 'At least one device was modified after the specified time');
    }
    const several = targets.length > 1;
    return targets.map((access) => {
      const row = rows.get(access.deviceId)!;
      const current = JSON.parse(row.properties) as Properties;
      const { next, touched } = change(current, access);
      const where = several ? ` (device ${access.deviceId})` : '';
      const problem = wellKnownProblem(next, touched);
      if (problem) throw new ApiError('SCHEMA_VIOLATION', `properties.${problem.path}: ${problem.message}${where}`);
      // Validated as the caller sees it: a hidden nodeType must not change the answer (that would reveal it), and the
      // caller only writes properties it can read, so its own changes are always checked when the schema applies.
      if (opts.validate) requireSchema(access.monitorManagement ? next : readableView(next, access), where);
      const text = JSON.stringify(next);
      if (text === row.properties) return toDevice(row, access, undefined, next); // no change, lastUpdate stays
      if (next.nodeId !== current.nodeId) requireFreeNodeId(db, next, row.id);
      const updated: DeviceRow = { id: row.id, properties: text, last_update: nextLastUpdate(row.last_update, opts.now) };
      updateDeviceProperties(db, updated.id, updated.properties, updated.last_update);
      opts.onChange?.(row.id, current, next);
      return toDevice(updated, access, undefined, next);
    });
  });
}

function readableView(properties: Properties, access: DeviceAccess): Properties {
  const view: Properties = {};
  for (const key of Object.keys(properties)) if (canReadProperty(access, key)) view[key] = properties[key];
  return view;
}

function requireSchema(properties: Properties, where = ''): void {
  const check = validateProperties(properties);
  if (!check.ok) {
    const path = check.path === '' ? 'properties' : check.path.startsWith('[') ? `properties${check.path}` : `properties.${check.path}`;
    throw new ApiError('SCHEMA_VIOLATION', `${path}: ${check.message}${where}`);
  }
}

/** nodeId is unique among devices; the message does not say which device holds it (it may be invisible). */
function requireFreeNodeId(db: Db, properties: Properties, exceptId?: number): void {
  const nodeId = properties.nodeId;
  if (typeof nodeId === 'string' && nodeIdHolder(db, nodeId, exceptId) !== undefined) {
    throw new ApiError('NODE_ID_TAKEN', `nodeId ${JSON.stringify(nodeId)} is already used by another device`);
  }
}
