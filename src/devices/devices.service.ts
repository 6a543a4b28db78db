// Device writes, each one IMMEDIATE transaction that holds the connection until it ends (every statement goes through
// its handle): the precondition check, the change and the write cannot interleave with another request, so of N
// writers racing with the same If-Unmodified-Since exactly one wins.
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
  /** called (and awaited) in the same transaction for each device whose properties changed (the audit entry) */
  onChange?: (deviceId: number, before: Properties, after: Properties) => Promise<void>;
}

type Properties = Record<string, unknown>;

export async function createDevice(db: Db, userId: number, roleId: number, properties: Properties, opts: Omit<WriteOptions, 'unmodifiedSince' | 'onChange'>): Promise<{ monitors: Monitors; device: Device }> {
  return db.tx(async (tx) => {
    if (opts.validate) requireSchema(properties);
    await requireFreeNodeId(tx, properties);
    const row = await insertDevice(tx, JSON.stringify(properties), opts.now);
    const monitors = await upsertMonitors(tx, roleId, row.id, { monitorManagement: true, reads: [], edits: [] });
    return { monitors: toMonitors(monitors), device: toDevice(row, await deviceAccess(tx, userId, row.id), undefined, properties) };
  });
}

export async function patchDevices(db: Db, targets: readonly DeviceAccess[], ops: readonly PatchOp[], touched: ReadonlySet<string>, opts: WriteOptions): Promise<Device[]> {
  return writeDevices(db, targets, opts, (current, access) => {
    const result = applyPatch(current, ops, access.deviceId);
    if (!result.ok) throw new ApiError('PATCH_FAILED', result.message);
    return { next: result.properties, touched };
  });
}

export async function putDevices(db: Db, targets: readonly DeviceAccess[], incoming: Properties, mode: PutMode, opts: WriteOptions): Promise<Device[]> {
  return writeDevices(db, targets, opts, (current) => {
    const result = applyPut(current, incoming, mode);
    if (!result.ok) throw new ApiError('BAD_REQUEST', `properties${result.path ? `.${result.path}` : ''}: ${result.message}`);
    return { next: result.properties, touched: putTouchedProperties(current, incoming, mode) };
  });
}

type Change = (current: Properties, access: DeviceAccess) => { next: Properties; touched: ReadonlySet<string> };

/** 412 for all targets first, then each change in request order; any failure rolls the whole request back. */
async function writeDevices(db: Db, targets: readonly DeviceAccess[], opts: WriteOptions, change: Change): Promise<Device[]> {
  return db.tx(async (tx) => {
    const ids = targets.map((t) => t.deviceId);
    const found = ids.length === 1 ? [(await findDevice(tx, ids[0]))!] : await findDevices(tx, ids);
    const rows = new Map(found.map((row) => [row.id, row]));
    const since = opts.unmodifiedSince;
    if (since !== undefined && targets.some((t) => rows.get(t.deviceId)!.last_update > since)) {
      throw new ApiError('DEVICE_MODIFIED', 'At least one device was modified after the specified time');
    }
    const several = targets.length > 1;
    const devices: Device[] = [];
    for (const access of targets) {
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
      if (text === row.properties) { // no change, lastUpdate stays
        devices.push(toDevice(row, access, undefined, next));
        continue;
      }
      if (next.nodeId !== current.nodeId) await requireFreeNodeId(tx, next, row.id);
      const updated: DeviceRow = { id: row.id, properties: text, last_update: nextLastUpdate(row.last_update, opts.now) };
      await updateDeviceProperties(tx, updated.id, updated.properties, updated.last_update);
      await opts.onChange?.(row.id, current, next);
      devices.push(toDevice(updated, access, undefined, next));
    }
    return devices;
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
async function requireFreeNodeId(db: Db, properties: Properties, exceptId?: number): Promise<void> {
  const nodeId = properties.nodeId;
  if (typeof nodeId === 'string' && await nodeIdHolder(db, nodeId, exceptId) !== undefined) {
    throw new ApiError('NODE_ID_TAKEN', `nodeId ${JSON.stringify(nodeId)} is already used by another device`);
  }
}
