// Alarm evaluation on a running node. Writes are told of their points once committed (written()): the request has
// its answer by then, and the points wait in a bounded queue that is drained in batches off the request path, so
// ingest does not wait for alarms. A write to a namespace no rule watches is dropped at once. No-data rules are
// checked on a timer. Rules are spread over shards; on PostgreSQL each shard is evaluated under its advisory lock,
// so whichever node received the points, a (rule, device) moves through its states once (alarms.service.ts).
import type { Db } from '../db/open.ts';
import type { Logger } from '../lib/logger.ts';
import type { Mailer } from '../lib/mailer.ts';
import type { AlarmService, PointObserver, ScannedLine, WrittenPoints } from '../context/deps.ts';
import { LineScanner, STRING } from '../telemetry/line-protocol/line-scanner.ts';
import { namespaceKey } from '../telemetry/namespaces.ts';
import { devicesOfRole } from '../access/alarms.ts';
import { deviceNodes, enabledRules, heldStates, indexVersion, statesOf, type RuleRow } from './alarms.store.ts';
import { FieldGroup } from './field-group.ts';
import {
  applyKept, checkNoDataShard, evaluatePoints, flushLastPoints, watchKey, type Evaluated, type KnownStates, shardOf, specOf, toState, type LastPoints, type Notice, type Watch, type WatchPoints,
} from './alarms.service.ts';
import { checkHold, checkNoData } from './evaluate.ts';
import { tell, type Teller } from './notify.ts';

/** writes (and their characters) held for evaluation at most; beyond, the oldest are dropped (and logged) rather than slow ingest */
const MAX_QUEUED = 10_000;
const MAX_QUEUED_CHARS = 64 * 1024 * 1024;
/** a batch gathers the writes of this long (one unit of work for many requests) */
const BATCH_MS = 20;
/** how often the rule index is checked against the database (rules changed on another node) */
const REFRESH_MS = 2_000;
/** how often the newest judged points that changed no phase are written (LastPoints) */
const FLUSH_MS = 5_000;
/** how often no-data rules and holds are checked */
export const NO_DATA_TICK_MS = 1_000;

/** The watches of one field of one device's series: its points are gathered once for all of them. */
type Entry = FieldGroup;

interface Index {
  version: string;
  /** namespace key -> measurement -> nodeId -> the (rule, device) pairs watching it */
  byNamespace: Map<string, Map<string, Map<string, Entry[]>>>;
  groups: Entry[];
  noData: Watch[];
  /** threshold pairs with a hold or a clear hold, by rule:device (the timer ends their holds) */
  held: Map<string, Watch>;
  /** namespace key -> series section text (by its hash) -> the entries watching it, or null: kept from write to write */
  seen: Map<string, Map<number, SeenSeries[]>>;
  seenCount: number;
}

interface SeenSeries { text: string; entries: Entry[] | null }
/** series sections remembered by the index at most (then forgotten and learnt again) */
const MAX_SEEN = 100_000;

export interface AlarmOptions {
  db: Db;
  now: () => number;
  log: Logger;
  mailer: Mailer;
  consoleUrl: string;
  /** events were written (the dispatcher looks for them) */
  wake: () => void;
}

export function createAlarms(o: AlarmOptions): AlarmService {
  const { db, log } = o;
  let index: Index | undefined;
  let checkedAt = -Infinity;
  let dirty = true;
  let queue: WrittenPoints[] = [];
  let queuedChars = 0;
  let dropped = 0;
  let started = false;
  const last: LastPoints = new Map();
  // SQLite: this process is the only writer, so the states it read stay true until it writes them (or a route does:
  // rulesChanged); on PostgreSQL another node may have moved them, so they are read every time
  const known: KnownStates | undefined = db.backend === 'sqlite' ? new Map() : undefined;
  // moves whenever the known states are forgotten: groups split by older ones are split again (field-group.ts)
  let epoch = 0;
  const flush = async () => {
    if (index !== undefined) for (const g of index.groups) g.spill(last);
    // the known states take the newest points as the flush writes them (never back)
    if (known !== undefined) {
      for (const [key, v] of last) {
        const row = known.get(key);
        if (row === undefined) continue;
        if (row === null) known.set(key, { rule_id: v.ruleId, device_id: v.deviceId, phase: 'normal', since: null, since_value: null, last_at: v.lastAt, last_value: v.lastValue, alarm_id: null, mailed_at: null });
        else if (row.last_at === null || row.last_at < v.lastAt) known.set(key, { ...row, last_at: v.lastAt, last_value: v.lastValue });
      }
    }
    await flushLastPoints(db, last);
  };
  let flushTimer: NodeJS.Timeout | undefined;
  let timer: NodeJS.Timeout | undefined;
  let batchTimer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  let stopped = false;

  let refreshing: Promise<Index> | undefined;
  /** The rule index, rebuilt when rules changed here or (checked every REFRESH_MS) anywhere; one rebuild at a time. */
  function refresh(): Promise<Index> {
    if (refreshing !== undefined) return refreshing.then(() => refresh());
    const now = o.now();
    if (index !== undefined && !dirty && now - checkedAt < REFRESH_MS) return Promise.resolve(index);
    refreshing = (async () => {
      checkedAt = now;
      const version = await indexVersion(db);
      if (index !== undefined && !dirty && index.version === version) return index;
      dirty = false;
      const next = await buildIndex(db, version);
      if (index !== undefined) for (const g of index.groups) g.spill(last);
      return (index = next);
    })().finally(() => { refreshing = undefined; });
    return refreshing;
  }

  function schedule(): void {
    if (batchTimer !== undefined || stopped || !started) return;
    batchTimer = setTimeout(() => {
      batchTimer = undefined;
      void drain().catch((err: unknown) => log.error('alarm evaluation failed', { error: String((err as Error)?.stack ?? err) }));
    }, BATCH_MS);
    batchTimer.unref();
  }

  async function evaluateQueued(): Promise<number> {
    const idx = await refresh();
    const batch = queue;
    queue = [];
    queuedChars = 0;
    if (dropped > 0) {
      log.warn('alarm evaluation fell behind: writes were not evaluated', { dropped });
      dropped = 0;
    }
    const work = new Map<string, { entry: Entry; points: number[] }>();
    for (const req of batch) {
      // the points the writer's scan handed over, where it did and the rules are the same since; else a scan again
      if (req.observe instanceof Observer && req.observe.began && req.observe.index === idx) req.observe.addTo(work);
      else collect(idx, req, work);
    }
    if (work.size === 0) return 0;
    const byShard = new Map<number, WatchPoints[]>();
    let allKnown = known !== undefined;
    const add = (watch: Watch, points: number[]) => {
      const shard = shardOf(watch.rule.id);
      const list = byShard.get(shard);
      if (list) list.push({ watch, points }); else byShard.set(shard, [{ watch, points }]);
      if (allKnown && !known!.has(watch.key)) allKnown = false;
    };
    // groups whose pairs were judged one by one: split afresh once their states may have moved
    const judgedAlone: Entry[] = [];
    if (known !== undefined && await split(work.values())) {
      for (const { entry, points } of work.values()) {
        const alone = entry.judge(points, last);
        if (alone.length === 0) continue;
        judgedAlone.push(entry);
        for (const watch of alone) add(watch, points);
      }
    } else {
      for (const { entry, points } of work.values()) for (const watch of entry.watches) add(watch, points);
    }
    if (byShard.size === 0) return 0;
    const now = o.now();
    const notices: Notice[] = [];
    // judged without the write lock first, in one read (none when every state is known): most batches move no
    // phase, and then take nothing from ingest
    const judge = async (tx: Db) => {
      const out = new Map<number, Evaluated | undefined>();
      for (const [shard, items] of byShard) out.set(shard, await evaluatePoints(tx, shard, items, now, last, true, known));
      return out;
    };
    const dry = allKnown ? await judge(db) : await db.read(judge);
    for (const [shard, items] of byShard) {
      let e = dry.get(shard);
      if (e === undefined) {
        if (known !== undefined) for (const w of items) known.delete(w.watch.key);
        for (const g of judgedAlone) g.unsplit(last);
        e = await db.write((tx) => evaluatePoints(tx, shard, items, now, last));
      }
      applyKept(last, e);
      notices.push(...e.notices);
    }
    await told(notices);
    return notices.length;
  }

  /**
   * Splits the groups that are not split in this epoch by their pairs' states (those not yet known are read first).
   * False when the states were forgotten meanwhile: the batch is judged pair by pair.
   */
  async function split(items: Iterable<{ entry: Entry }>): Promise<boolean> {
    const todo: Entry[] = [];
    for (const { entry } of items) if (!entry.isSplit(epoch)) todo.push(entry);
    if (todo.length === 0) return true;
    const at = epoch;
    const missing = todo.flatMap((g) => g.watches.filter((w) => !known!.has(w.key)));
    if (missing.length > 0) {
      const rows = await statesOf(db, missing.map((w) => [w.rule.id, w.deviceId] as const));
      if (epoch !== at) return false;
      const byKey = new Map(rows.map((r) => [watchKey(r.rule_id, r.device_id), r]));
      for (const w of missing) if (!known!.has(w.key)) known!.set(w.key, byKey.get(w.key) ?? null);
    }
    for (const g of todo) g.split(epoch, known!, last);
    return true;
  }

  const teller: Teller = { db, log, mailer: o.mailer, consoleUrl: o.consoleUrl, wake: o.wake };
  const told = (notices: readonly Notice[]) => tell(teller, notices);

  function drain(): Promise<number> {
    if (running !== undefined) return running.then(() => drain());
    running = (async () => {
      let n = 0;
      while (queue.length > 0) n += await evaluateQueued();
      if (!started) await flush(); // tests and benchmarks: the database holds everything judged
      return n;
    })().finally(() => { running = undefined; });
    return running;
  }

  /** The timer: no-data rules, and threshold pairs whose hold (or clear hold) is over while no point came. */
  async function noDataCheck(): Promise<number> {
    const idx = await refresh();
    const now = o.now();
    // read first: the write lock is taken only for the watches that are due
    const rows = await statesOf(db, idx.noData.map((w) => [w.rule.id, w.deviceId] as const));
    const byKey = new Map(rows.map((r) => [watchKey(r.rule_id, r.device_id), r]));
    const due = idx.noData.filter((w) => checkNoData(w.spec, toState(byKey.get(w.key), last.get(w.key)), now, w.rule.updated_at).transition !== undefined);
    if (idx.held.size > 0) {
      for (const row of await heldStates(db)) {
        const w = idx.held.get(watchKey(row.rule_id, row.device_id));
        if (w !== undefined && checkHold(w.spec, toState(row, last.get(w.key)), now).transition !== undefined) due.push(w);
      }
    }
    if (due.length === 0) return 0;
    const byShard = new Map<number, Watch[]>();
    for (const w of due) {
      const list = byShard.get(shardOf(w.rule.id));
      if (list) list.push(w); else byShard.set(shardOf(w.rule.id), [w]);
    }
    const notices: Notice[] = [];
    for (const [shard, watches] of byShard) {
      const e = await db.write((tx) => checkNoDataShard(tx, shard, watches, now, last));
      if (e === undefined) continue;
      for (const key of e.saved) known?.delete(key);
      applyKept(last, e);
      notices.push(...e.notices);
    }
    await told(notices);
    return notices.length;
  }

  return {
    written(req) {
      if (stopped) return;
      if (!dirty && index !== undefined && !index.byNamespace.has(namespaceKey(req.namespace))) return;
      const chars = req.body.reduce((n, piece) => n + piece.length, 0);
      while (queue.length > 0 && (queue.length >= MAX_QUEUED || queuedChars + chars > MAX_QUEUED_CHARS)) {
        queuedChars -= queue.shift()!.body.reduce((n, piece) => n + piece.length, 0);
        dropped++;
      }
      queue.push(req);
      queuedChars += chars;
      schedule();
    },
    observe(namespace) {
      if (stopped || dirty || index === undefined) return undefined;
      const measurements = index.byNamespace.get(namespaceKey(namespace));
      return measurements === undefined ? undefined : new Observer(index, measurements);
    },
    rulesChanged() { dirty = true; known?.clear(); epoch++; },
    drain,
    checkNoData: noDataCheck,
    start() {
      if (timer !== undefined) return;
      started = true;
      schedule();
      timer = setInterval(() => {
        void noDataCheck().catch((err: unknown) => log.error('alarm no-data check failed', { error: String((err as Error)?.stack ?? err) }));
      }, NO_DATA_TICK_MS);
      timer.unref();
      flushTimer = setInterval(() => {
        void flush().catch((err: unknown) => log.error('alarm state flush failed', { error: String((err as Error)?.stack ?? err) }));
      }, FLUSH_MS);
      flushTimer.unref();
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) clearInterval(timer);
      if (flushTimer !== undefined) clearInterval(flushTimer);
      if (batchTimer !== undefined) clearTimeout(batchTimer);
      timer = batchTimer = undefined;
      await drain().catch((err: unknown) => log.error('alarm evaluation failed', { error: String((err as Error)?.stack ?? err) }));
      await flush().catch((err: unknown) => log.error('alarm state flush failed', { error: String((err as Error)?.stack ?? err) }));
    },
  };
}

/** The points of one write that rules watch, as the writer's scan tells them (without scanning the body again). */
class Observer implements PointObserver {
  began = false;
  private points = new Map<Entry, number[]>();
  constructor(readonly index: Index, private readonly measurements: Map<string, Map<string, Entry[]>>) {}

  begin(): void {
    this.began = true;
    this.points.clear();
  }

  line(measurement: string, nodeId: string, sc: ScannedLine): void {
    const entries = this.measurements.get(measurement)?.get(nodeId);
    if (entries === undefined) return;
    for (const e of entries) {
      let k = 0;
      while (k < sc.fieldCount && sc.fieldKeys[k] !== e.field) k++;
      if (k === sc.fieldCount) continue;
      let list = this.points.get(e);
      if (list === undefined) this.points.set(e, list = []);
      list.push(sc.timeMs, fieldValue(sc, k));
    }
  }

  addTo(work: Map<string, { entry: Entry; points: number[] }>): void {
    for (const [entry, points] of this.points) {
      const w = work.get(entry.key);
      if (w === undefined) work.set(entry.key, { entry, points });
      else for (const x of points) w.points.push(x);
    }
  }
}

/** A field's value to the evaluation: a string field is watched for arrivals only (no-data rules), NaN to a threshold. */
function fieldValue(sc: ScannedLine, k: number): number {
  const big = sc.fieldValues[k];
  return sc.fieldKinds[k] === STRING ? Number.NaN : typeof big === 'bigint' ? Number(big) : sc.fieldNumbers[k];
}

/** The points of one committed write that rules watch, added to `work` by device and field. */
function collect(idx: Index, req: WrittenPoints, work: Map<string, { entry: Entry; points: number[] }>): void {
  const nsKey = namespaceKey(req.namespace);
  const measurements = idx.byNamespace.get(nsKey);
  if (measurements === undefined) return;
  const sc = new LineScanner(req.body, { precision: req.precision, nowMs: req.now });
  const retainFrom = req.retainFromMs ?? -Infinity;
  // per series section text (by its hash): the entries watching it, or null; devices write the same series again
  // and again, so this is kept with the index
  if (idx.seenCount > MAX_SEEN) { idx.seen.clear(); idx.seenCount = 0; }
  let seen = idx.seen.get(nsKey);
  if (seen === undefined) idx.seen.set(nsKey, seen = new Map());
  try {
    while (sc.nextLine()) {
      let bucket = seen.get(sc.seriesHash);
      let hit: SeenSeries | undefined;
      if (bucket !== undefined) for (const b of bucket) if (sc.seriesTextIs(b.text)) { hit = b; break; }
      if (hit === undefined) {
        sc.parseSeries();
        const nodeId = sc.tag('nodeId');
        const entries = nodeId === undefined ? undefined : measurements.get(sc.measurement)?.get(nodeId);
        hit = { text: sc.seriesText(), entries: entries ?? null };
        if (bucket === undefined) seen.set(sc.seriesHash, bucket = []);
        bucket.push(hit);
        idx.seenCount++;
      }
      if (hit.entries === null) continue;
      sc.parseFields();
      if (sc.timeMs < retainFrom) continue;
      for (const e of hit.entries) {
        let k = 0;
        while (k < sc.fieldCount && sc.fieldKeys[k] !== e.field) k++;
        if (k === sc.fieldCount) continue;
        let w = work.get(e.key);
        if (w === undefined) work.set(e.key, w = { entry: e, points: [] });
        w.points.push(sc.timeMs, fieldValue(sc, k));
      }
    }
  } catch {
    // the write was stored, so its body scanned cleanly then; nothing more of it can be evaluated
  }
}

/** Every enabled rule's (rule, device) pairs: the devices its role may read, as listed and narrowed by nodeType. */
async function buildIndex(db: Db, version: string): Promise<Index> {
  const rules = await enabledRules(db);
  const byRole = new Map<number, number[]>();
  for (const r of rules) if (!byRole.has(r.role_id)) byRole.set(r.role_id, (await devicesOfRole(db, r.role_id)).map((d) => d.deviceId));
  const allIds = new Set<number>();
  for (const ids of byRole.values()) for (const id of ids) allIds.add(id);
  const nodes = new Map((await deviceNodes(db, [...allIds])).map((n) => [n.id, n]));
  const byNamespace: Index['byNamespace'] = new Map();
  const groups: Entry[] = [];
  const noData: Watch[] = [];
  const held = new Map<string, Watch>();
  for (const rule of rules) {
    const readable = byRole.get(rule.role_id)!;
    const listed = rule.device_ids === null ? undefined : new Set(JSON.parse(rule.device_ids) as number[]);
    const spec = specOf(rule);
    for (const deviceId of readable) {
      if (listed !== undefined && !listed.has(deviceId)) continue;
      const node = nodes.get(deviceId);
      if (node === undefined || (rule.node_type !== null && node.node_type !== rule.node_type)) continue;
      const watch: Watch = { rule, spec, deviceId, key: watchKey(rule.id, deviceId) };
      if (rule.kind === 'noData') noData.push(watch);
      else if (rule.hold_ms > 0 || rule.clear_hold_ms > 0) held.set(watch.key, watch);
      if (node.node_id === null) continue;
      addEntry(byNamespace, groups, rule, node.node_id, deviceId, watch);
    }
  }
  return { version, byNamespace, groups, noData, held, seen: new Map(), seenCount: 0 };
}

function addEntry(byNamespace: Index['byNamespace'], groups: Entry[], rule: RuleRow, nodeId: string, deviceId: number, watch: Watch): void {
  let m = byNamespace.get(rule.namespace_key);
  if (m === undefined) byNamespace.set(rule.namespace_key, m = new Map());
  let n = m.get(rule.measurement);
  if (n === undefined) m.set(rule.measurement, n = new Map());
  let list = n.get(nodeId);
  if (list === undefined) n.set(nodeId, list = []);
  let entry = list.find((e) => e.field === rule.field);
  if (entry === undefined) {
    list.push(entry = new FieldGroup(rule.field, `${rule.namespace_key}\u0000${rule.measurement}\u0000${deviceId}\u0000${rule.field}`));
    groups.push(entry);
  }
  entry.watches.push(watch);
}
