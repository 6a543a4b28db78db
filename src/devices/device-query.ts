// POST /v1/device/query and its deprecated GET: the devices u may read, filtered, paginated, serialized.
//
// Security: every filter and condition is evaluated on what the caller may READ. A device whose property is not
// readable never matches a filter or condition on that property, whatever its value, so the answer to a query can
// never depend on (and thus reveal) a hidden value.
//
// `selectionHash` yields the skipHash of a query, reading ids and lastUpdate only (plus the values conditions need), so
// a client polling with an unchanged hash gets its 204 without any device being read in full or serialized.
// `devicesJson` selects and serializes together, slice by slice, into the answer's bytes: a listing of 10,000 devices
// never holds more than one slice of rows (the rest would only be copied around by the garbage collector).
// Both start from the caller's readable set, which the rights engine keeps per node while rights do not change.
import { createHash } from 'node:crypto';
import type { Db } from '../db/open.ts';
import { canReadProperty, readableDevicesOf, type DeviceAccess } from '../access/rights.ts';
import { devicesMonitoredByCompanies, visibleCompanyIds } from '../access/companies.ts';
import { deviceTimesText, parseTimes, scanDevices, type ScanMode, type ScannedDevice } from './devices.store.ts';
import { LruCache } from '../lib/lru-cache.ts';
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

// rows are read in slices, so a small `limit` over a large visible set stops early: the first slice is about twice the
// limit (filters and conditions may skip some), the next ones double, up to SLICE. On SQLite, 500 rows (~0.4 MB of
// stored text) are gone before the garbage collector's next young-generation pass, where larger slices would be promoted
// and pile up in the old generation until a full collection. On PostgreSQL each slice is a round trip, and larger
// slices are faster for the same peak.
const SLICE = { sqlite: 500, postgres: 2000 } as const;
const FIRST_SLICE_MIN = 64;

interface Candidates {
  /** readable devices, ascending by id, narrowed by filter.id, companyId and afterId */
  accesses: readonly DeviceAccess[];
  filter: NonNullable<DeviceQuery['filter']>;
  /** the well-known filters given: they run in SQL on the stored values; readability is checked per device */
  filtered: readonly ('nodeId' | 'nodeType' | 'isActive')[];
  conditions: [string, unknown[]][];
  limit: number;
}

async function candidates(db: Db, userId: number, query: DeviceQuery): Promise<Candidates> {
  const filter = query.filter ?? {};
  // companyId narrows the id set before rights are resolved: only companies u can see count (another one filters to
  // nothing, exactly like a company that does not exist), and readability is still decided by the rights engine
  let onlyIds = filter.id;
  for (const companyIds of [query.companyId, filter.companyId]) {
    if (companyIds === undefined) continue;
    const monitored = await devicesMonitoredByCompanies(db, await visibleCompanyIds(db, userId, companyIds));
    onlyIds = onlyIds ? onlyIds.filter((id) => monitored.has(id)) : [...monitored];
  }
  return {
    accesses: await readableDevicesOf(db, userId, onlyIds, query.afterId ?? -1),
    filter,
    filtered: (['nodeId', 'nodeType', 'isActive'] as const).filter((key) => filter[key] !== undefined),
    conditions: Object.entries(query.conditions ?? {}),
    limit: query.limit ?? Infinity,
  };
}

/** Calls `take` for each selected device in id order (at most `limit`), reading rows slice by slice as `mode` says. */
async function eachSelected(db: Db, c: Candidates, mode: ScanMode, take: (access: DeviceAccess, row: ScannedDevice) => void): Promise<void> {
  let taken = 0;
  // ids and times alone are small: a skipHash comparison without a limit reads them in one go
  const most = mode === 'times' ? Infinity : SLICE[db.backend];
  let size = Number.isFinite(c.limit) ? Math.min(most, Math.max(FIRST_SLICE_MIN, 2 * c.limit)) : most;
  // The slices of the whole selection (no limit), in order. On PostgreSQL the next slice is asked for before this one
  // is walked: the server reads and sends it while this process serializes (SQLite reads in this thread anyway).
  const readAhead = db.backend === 'postgres' && !Number.isFinite(c.limit);
  const read = (slice: readonly DeviceAccess[]) => ({ slice, rows: scanDevices(db, slice.map((a) => a.deviceId), c.filter, mode) });
  let ahead: ReturnType<typeof read> | undefined;
  for (let at = 0; at < c.accesses.length && taken < c.limit; at += size, size = Math.min(most, 2 * size)) {
    const current = ahead ?? read(c.accesses.slice(at, at + size));
    const { slice } = current;
    const rows = await current.rows;
    ahead = undefined;
    if (readAhead && at + size < c.accesses.length) {
      ahead = read(c.accesses.slice(at + size, at + size + Math.min(most, 2 * size)));
      // awaited by the next turn of the loop; when an error ended the walk first, its own failure must not become an
      // unhandled rejection (the walk's error is the answer)
      void ahead.rows.catch(() => {});
    }
    // rows and slice both ascend by id, rows a subset of the slice: walk them side by side
    let k = 0;
    for (const row of rows) {
      while (k < slice.length && slice[k]!.deviceId !== row.id) k++;
      const access = slice[k];
      if (access === undefined) break;
      if (!c.filtered.every((key) => canReadProperty(access, key))) continue;
      if (c.conditions.length > 0) {
        const properties = JSON.parse(row.properties!) as Record<string, unknown>;
        const matches = ([key, values]: [string, unknown[]]) =>
          canReadProperty(access, key) && Object.hasOwn(properties, key) && values.some((value) => jsonEqual(properties[key], value));
        if (!c.conditions.every(matches)) continue;
      }
      take(access, row);
      if (++taken >= c.limit) break;
    }
  }
}

/** base64 SHA-256 over the lastUpdate strings of the selected devices in id order, joined with "\n" */
export async function selectionHash(db: Db, userId: number, query: DeviceQuery): Promise<string> {
  const c = await candidates(db, userId, query);
  if (c.filtered.length === 0 && c.conditions.length === 0 && !Number.isFinite(c.limit)) return plainHash(db, c);
  const lastUpdates: string[] = [];
  await eachSelected(db, c, c.conditions.length > 0 ? 'properties' : 'times', (_access, row) => lastUpdates.push(isoTime(row.last_update)));
  return lastUpdateHash(lastUpdates);
}

// A query without a limit and without a filter whose readability could drop a device selects every device it reads,
// so its hash is a function of the ids-and-times text alone: the hashes of recent texts are kept (the same
// installation polled again, unchanged, gives the same text, whoever asks).
const HASHES = Symbol('skipHash texts');
const HASHED_TEXT_MAX_CHARS = 4_000_000;

async function plainHash(db: Db, c: Candidates): Promise<string> {
  const text = await deviceTimesText(db, c.accesses.map((a) => a.deviceId), c.filter);
  let hashes = db.memo.get(HASHES) as LruCache<string, string> | undefined;
  if (!hashes) db.memo.set(HASHES, hashes = new LruCache<string, string>(256, undefined, { of: (t) => t.length, max: HASHED_TEXT_MAX_CHARS }));
  let hash = hashes.get(text);
  if (hash === undefined) hashes.set(text, hash = lastUpdateHash(parseTimes(text).map((row) => isoTime(row.last_update))));
  return hash;
}

/**
 * The response body `{ device: Device[] }` as UTF-8 bytes in chunks; large listings are assembled as text (see
 * toDeviceJson).
 */
export async function devicesJson(db: Db, userId: number, query: DeviceQuery): Promise<Utf8Chunks> {
  const c = await candidates(db, userId, query);
  const only = query.fields ? new Set(query.fields) : undefined;
  const out = new Utf8Chunks();
  out.write('{"device":[');
  let first = true;
  await eachSelected(db, c, 'properties', (access, row) => {
    out.write(first ? '' : ',');
    out.write(toDeviceJson({ id: row.id, last_update: row.last_update, properties: row.properties! }, access, only));
    first = false;
  });
  out.write(']}');
  return out;
}

/**
 * Texts encoded into UTF-8 as they are made, in chunks of one size taken from a pool. A listing of megabytes is never
 * one buffer, and its chunks go back to the pool once the answer is on its way (release): buffers of many sizes, each
 * freed whenever the garbage collector came by, left the C heap holding several answers' worth of memory (glibc keeps
 * freed memory for reuse, and raises its threshold for giving big blocks back with each big block freed).
 */
export class Utf8Chunks {
  static readonly SIZE = 64 * 1024;
  /** chunks kept for the next answers: at most 8 MiB */
  private static readonly free: Buffer[] = [];
  private static readonly KEEP = 128;
  private readonly chunks: Buffer[] = [];
  private current = Utf8Chunks.take();
  private used = 0;
  private released = false;
  /** bytes written */
  length = 0;

  private static take(): Buffer {
    return Utf8Chunks.free.pop() ?? Buffer.allocUnsafeSlow(Utf8Chunks.SIZE);
  }

  write(text: string): void {
    // a text that may not fit (at most 3 bytes per UTF-16 unit) goes through its own bytes, split over chunks
    if (3 * text.length > Utf8Chunks.SIZE - this.used) {
      const bytes = Buffer.from(text);
      for (let at = 0; at < bytes.length;) {
        if (this.used === Utf8Chunks.SIZE) this.next();
        const n = bytes.copy(this.current, this.used, at);
        this.used += n;
        at += n;
      }
      this.length += bytes.length;
      return;
    }
    const n = this.current.write(text, this.used);
    this.used += n;
    this.length += n;
  }

  private next(): void {
    this.chunks.push(this.current);
    this.current = Utf8Chunks.take();
    this.used = 0;
  }

  /** the written bytes, chunk by chunk (the last one cut to its length); valid until release() */
  parts(): Buffer[] {
    return [...this.chunks, this.current.subarray(0, this.used)];
  }

  /** Gives the chunks back for other answers: only once nothing reads parts() any more (the answer is written). */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const chunk of [...this.chunks, this.current]) if (Utf8Chunks.free.length < Utf8Chunks.KEEP) Utf8Chunks.free.push(chunk);
  }
}

function lastUpdateHash(lastUpdates: readonly string[]): string {
  return createHash('sha256').update(lastUpdates.join('\n')).digest('base64');
}
