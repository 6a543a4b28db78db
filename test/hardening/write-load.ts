// A mixed write load against the running executable and the ledger of what it was told. Every write carries values
// unique to it, so after a crash (or in a backup) each one can be looked for on its own:
//   patch      PATCH /v1/device/{id[,id]} adding a property named after the write (several ids: all-or-nothing)
//   create     POST /v1/device with a fresh nodeId
//   member     PUT /v1/role/{r}/member?userEmail=... and DELETE .../member/{id}, on (role, user) pairs one worker owns
//   licenses   POST /v1/license (a batch of keys for the worker's own pool)
//   activate   POST /v1/license/activate with an activationIso unique to the write
//   claim      POST /v1/license/claim to a controller
//   telemetry  POST /v1/telemetry, 1..5 points with timestamps unique to the write (all-or-nothing)
// A write is `acked` when a 2xx arrived, `unknown` when no answer did (the server died, the connection was reset) or
// the answer was 503 DATABASE_UNAVAILABLE, and `refused` for any other answer. The checks: every acked write is present with the value written; an unknown one is
// present entirely or not at all; a refused one is absent.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { HttpClient, HttpResult } from '../support/http-client.ts';
import { seeded, type CheckDb } from '../support/harness.ts';

export type Outcome = 'acked' | 'unknown' | 'refused';

interface Base { worker: number; seq: number; outcome: Outcome; status: number; /** network error when unanswered */ error?: string }
export type Write = Base & (
  | { kind: 'patch'; deviceIds: number[]; key: string; value: number }
  | { kind: 'create'; nodeId: string }
  | { kind: 'member-put'; roleId: number; email: string }
  | { kind: 'member-delete'; roleId: number; email: string; memberId: number }
  | { kind: 'licenses'; keys: string[] }
  | { kind: 'activate'; key: string; at: number }
  | { kind: 'claim'; key: string; nodeId: string }
  | { kind: 'telemetry'; points: { ts: number; value: number }[] }
);
export type WriteKind = Write['kind'];

/** What the fixture holds for the load: created once, on the first start. */
export interface Fixture {
  roleIds: number[];
  /** devices the patches target */
  deviceIds: number[];
  /** controllers (nodeType smartgridController) the claims and telemetry target */
  controllers: { id: number; nodeId: string }[];
  /** users per worker (e-mails), created up front */
  usersOf: string[][];
  /** the start of the telemetry timestamps, ms */
  telemetryBase: number;
  db: string;
}

const DAY_MS = 86_400_000;

export const FLAGS_ALL = { roleManagement: true, userManagement: true, viewManagement: true, deviceManagement: true, reportManagement: true, alarmManagement: true };

function ok(r: HttpResult, what: string): HttpResult {
  assert.ok(r.status >= 200 && r.status < 300, `${what}: ${r.status} ${r.error ?? ''} ${r.text.slice(0, 300)}`);
  return r;
}

/** Roles, devices, controllers and users for `workers` workers, made over the API as the admin. */
export async function createFixture(client: HttpClient, token: string, workers: number, tag: string): Promise<Fixture> {
  const roleIds: number[] = [];
  for (let i = 0; i < 3; i++) {
    const r = ok(await client.request('POST', '/v1/role?parentRoleId=1', {
      token, body: { manages: FLAGS_ALL, role: { name: `${tag}-role-${i}`, selfRights: FLAGS_ALL } },
    }), 'create role');
    roleIds.push(r.body.role.id);
  }
  const deviceIds: number[] = [];
  for (let i = 0; i < 6; i++) {
    const r = ok(await client.request('POST', '/v1/device?roleId=1', {
      token, body: { properties: { nodeId: `${tag}-dev-${i}`, nodeType: 'powerMeter', name: `device ${i}` } },
    }), 'create device');
    deviceIds.push(r.body.device.id);
  }
  const controllers: Fixture['controllers'] = [];
  for (let i = 0; i < 2; i++) {
    const nodeId = `${tag}-ctrl-${i}`;
    const r = ok(await client.request('POST', '/v1/device?roleId=1', {
      token, body: { properties: { nodeId, nodeType: 'smartgridController', name: `controller ${i}` } },
    }), 'create controller');
    controllers.push({ id: r.body.device.id, nodeId });
  }
  // Users come from member upserts on the first role (a password makes the server hash it; four at a time).
  const usersOf: string[][] = Array.from({ length: workers }, (_, w) => Array.from({ length: 3 }, (_, u) => `${tag}-w${w}-u${u}@load.test`));
  const all = usersOf.flat();
  for (let i = 0; i < all.length; i += 4) {
    await Promise.all(all.slice(i, i + 4).map(async (email) => ok(await client.request('PUT',
      `/v1/role/${roleIds[0]}/member?userEmail=${encodeURIComponent(email)}&password=load-user-password`, { token, body: {} }), 'create user')));
  }
  return { roleIds, deviceIds, controllers, usersOf, telemetryBase: Math.floor(Date.now() / 1000) * 1000 - 3_600_000, db: tag };
}

export interface LoadState {
  writes: Write[];
  /** per worker: its license keys not used yet */
  freeKeys: string[][];
  /** per worker and (role, email): the member id when the last answered operation left it present */
  membership: Map<string, number | undefined>[];
  /** per worker: next sequence number (unique values) */
  seq: number[];
  statuses: Map<number, number>;
}

export function newLoadState(workers: number): LoadState {
  return {
    writes: [],
    freeKeys: Array.from({ length: workers }, () => []),
    membership: Array.from({ length: workers }, () => new Map()),
    seq: Array(workers).fill(0),
    statuses: new Map(),
  };
}

export const DEFAULT_MIX: Record<WriteKind, number> = {
  patch: 40, create: 5, 'member-put': 12, 'member-delete': 8, licenses: 0, activate: 12, claim: 8, telemetry: 15,
};

function outcomeOf(r: HttpResult): Outcome {
  // 503 DATABASE_UNAVAILABLE: the connection to the database broke, possibly during the COMMIT — stored or not, whole
  if (r.status === 0 || (r.status === 503 && r.body?.code === 'DATABASE_UNAVAILABLE')) return 'unknown';
  return r.status >= 200 && r.status < 300 ? 'acked' : 'refused';
}

/**
 * One worker: sequential writes until `keepGoing()` is false or an answer does not arrive (then the server is gone).
 * Returns the number of writes sent.
 */
export async function runWorker(o: {
  client: HttpClient; token: () => string; fixture: Fixture; state: LoadState; worker: number; seed: number;
  keepGoing: () => boolean; mix?: Record<WriteKind, number>; maxWrites?: number;
}): Promise<number> {
  const { client, fixture, state, worker } = o;
  const rnd = seeded(o.seed);
  const mix = Object.entries(o.mix ?? DEFAULT_MIX).filter(([, w]) => w > 0) as [WriteKind, number][];
  const total = mix.reduce((s, [, w]) => s + w, 0);
  const chooseKind = (): WriteKind => {
    let x = rnd.next() * total;
    for (const [k, w] of mix) { if ((x -= w) < 0) return k; }
    return mix[0][0];
  };
  let sent = 0;
  while (o.keepGoing() && sent < (o.maxWrites ?? Infinity)) {
    const seq = state.seq[worker]++;
    let kind = chooseKind();
    if ((kind === 'activate' || kind === 'claim') && state.freeKeys[worker].length === 0) kind = 'licenses';
    const record = (w: Write, r: HttpResult) => {
      w.outcome = outcomeOf(r);
      w.status = r.status;
      if (r.error) w.error = r.error;
      state.statuses.set(r.status, (state.statuses.get(r.status) ?? 0) + 1);
    };
    const base = { worker, seq, outcome: 'unknown' as Outcome, status: 0 };
    let r: HttpResult;
    let w: Write;
    switch (kind) {
      case 'patch': {
        const n = rnd.next() < 0.2 ? 2 : 1;
        const first = rnd.int(0, fixture.deviceIds.length - 1);
        const deviceIds = n === 1 ? [fixture.deviceIds[first]] : [fixture.deviceIds[first], fixture.deviceIds[(first + 1 + rnd.int(0, fixture.deviceIds.length - 2)) % fixture.deviceIds.length]];
        w = { ...base, kind, deviceIds, key: `w${worker}s${seq}`, value: seq * 1000 + worker };
        state.writes.push(w);
        r = await client.request('PATCH', `/v1/device/${deviceIds.join(',')}`, { token: o.token(), body: [{ op: 'add', path: `/${w.key}`, value: w.value }] });
        break;
      }
      case 'create': {
        w = { ...base, kind, nodeId: `${fixture.db}-new-w${worker}s${seq}` };
        state.writes.push(w);
        r = await client.request('POST', `/v1/device?roleId=${fixture.roleIds[worker % fixture.roleIds.length]}`, {
          token: o.token(), body: { properties: { nodeId: w.nodeId, nodeType: 'battery', seq } },
        });
        break;
      }
      case 'member-put':
      case 'member-delete': {
        const roleId = rnd.pick(fixture.roleIds);
        const email = rnd.pick(fixture.usersOf[worker]);
        const pair = `${roleId}|${email}`;
        const memberId = state.membership[worker].get(pair);
        if (memberId !== undefined && kind === 'member-delete') {
          w = { ...base, kind: 'member-delete', roleId, email, memberId };
          state.writes.push(w);
          r = await client.request('DELETE', `/v1/role/${roleId}/member/${memberId}`, { token: o.token() });
          if (outcomeOf(r) !== 'refused') state.membership[worker].delete(pair);
        } else {
          w = { ...base, kind: 'member-put', roleId, email };
          state.writes.push(w);
          r = await client.request('PUT', `/v1/role/${roleId}/member?userEmail=${encodeURIComponent(email)}`, { token: o.token(), body: {} });
          if (r.status === 200) state.membership[worker].set(pair, r.body.member.id);
          else if (r.status === 0) state.membership[worker].delete(pair);
        }
        break;
      }
      case 'licenses': {
        w = { ...base, kind, keys: [] };
        state.writes.push(w);
        r = await client.request('POST', '/v1/license', { token: o.token(), body: { type: 'residential', duration: 365, solarKw: worker, count: 20 } });
        if (r.status === 200) {
          w.keys = (r.body.licenses as { key: string }[]).map((l) => l.key);
          state.freeKeys[worker].push(...w.keys);
        }
        break;
      }
      case 'activate': {
        const key = state.freeKeys[worker].shift()!;
        // a time unique to this write, on a whole millisecond
        w = { ...base, kind, key, at: Date.UTC(2026, 0, 1) + (worker * 1_000_000 + seq) * 1000 + 7 };
        state.writes.push(w);
        r = await client.request('POST', '/v1/license/activate', { token: o.token(), body: { key, activationIso: new Date(w.at).toISOString() } });
        break;
      }
      case 'claim': {
        const key = state.freeKeys[worker].shift()!;
        w = { ...base, kind, key, nodeId: rnd.pick(fixture.controllers).nodeId };
        state.writes.push(w);
        r = await client.request('POST', '/v1/license/claim', { token: o.token(), body: { licenseKey: key, nodeId: w.nodeId } });
        break;
      }
      case 'telemetry': {
        const n = rnd.int(1, 5);
        // spread over 40 one-day shard windows: some writes create their shard table (DDL inside the write)
        const points = Array.from({ length: n }, (_, i) => ({ ts: fixture.telemetryBase - (seq % 40) * DAY_MS + seq * 8 + i, value: seq * 10 + i }));
        w = { ...base, kind, points };
        state.writes.push(w);
        const body = points.map((p) => `load,nodeId=${fixture.controllers[0].nodeId},w=${worker} v=${p.value}i ${p.ts}`).join('\n');
        r = await client.request('POST', `/v1/telemetry?db=${fixture.db}&rp=autogen&precision=ms`, { token: o.token(), raw: body, headers: { 'content-type': 'text/plain' } });
        break;
      }
    }
    record(w!, r!);
    sent++;
    if (r!.status === 0) break;
  }
  return sent;
}

/** The state a check compares the ledger with. */
export interface Observed {
  /** device id -> properties */
  devices: Map<number, Record<string, unknown>>;
  /** nodeId -> number of devices holding it */
  nodeIds: Map<string, number>;
  /** `${roleId}|${lower-cased email}` */
  members: Set<string>;
  /** license key -> activation ms or null; a key missing here does not exist */
  licenses: Map<string, number | null>;
  /** license key -> nodeId of the controller it is linked to */
  claims: Map<string, string>;
  /** `${worker}|${ts}` -> value */
  points: Map<string, number>;
}

/** Reads devices, members and telemetry through the API, licenses and links from the database. */
export async function observe(client: HttpClient, token: string, fixture: Fixture, workers: number, db: CheckDb): Promise<Observed> {
  const devices = ok(await client.request('POST', '/v1/device/query', { token, body: {} }), 'device query').body.device as { id: number; properties: Record<string, unknown> }[];
  const members = ok(await client.request('POST', '/v1/role/*/member/query', { token, body: {} }), 'member query').body.member as { roleId: number; userEmail: string }[];
  const points = new Map<string, number>();
  await observeTelemetry(client, token, fixture, points);
  void workers;
  const nodeIds = new Map<string, number>();
  for (const d of devices) {
    const n = d.properties.nodeId;
    if (typeof n === 'string') nodeIds.set(n, (nodeIds.get(n) ?? 0) + 1);
  }
  const licenses = new Map<string, number | null>();
  for (const row of await db.all(sql<{ key: string; activation_date: number | null }>`SELECT key, activation_date FROM licenses`)) {
    licenses.set(row.key, row.activation_date);
  }
  const claims = new Map<string, string>();
  const nodeIdOf = db.backend === 'postgres' ? sql`d.node_id` : sql`json_extract(d.properties, '$.nodeId')`;
  for (const row of await db.all(sql<{ key: string; nodeId: string }>`SELECT l.key AS key, ${nodeIdOf} AS "nodeId"
      FROM license_datalink k JOIN licenses l ON l.id = k.license_id JOIN devices d ON d.id = k.device_id`)) {
    claims.set(row.key, row.nodeId);
  }
  return {
    devices: new Map(devices.map((d) => [d.id, d.properties])),
    nodeIds,
    members: new Set(members.map((m) => `${m.roleId}|${m.userEmail.toLowerCase()}`)),
    licenses,
    claims,
    points,
  };
}

/** The load's telemetry points, read through the API. */
async function observeTelemetry(client: HttpClient, token: string, fixture: Fixture, points: Map<string, number>): Promise<void> {
  const query = () => client.request('POST', '/v1/telemetry/query', {
    token,
    body: {
      select: ['v'], from: { measurement: 'load', database: fixture.db, retentionPolicy: 'autogen' },
      where: { time: [{ operator: '>=', value: fixture.telemetryBase - 41 * DAY_MS }, { operator: '<', value: fixture.telemetryBase + 3_000_000 }], tags: { nodeId: fixture.controllers[0].nodeId } },
      // bounds the cost estimate (one datapoint per 10 s of range otherwise); far more than the load writes in a run
      // (~15 % of its writes, 1..5 points each); a run that wrote more would miss points here and fail, not pass
      limit: 10_000,
    },
  });
  // The query bucket outlives a restart where it is shared (PostgreSQL): after many observations the observer waits
  // out its Retry-After, as any client must.
  let q = await query();
  for (let tries = 0; q.status === 429 && tries < 10; tries++) {
    await new Promise((resolve) => setTimeout(resolve, Number(q.headers['retry-after'] ?? 1) * 1000));
    q = await query();
  }
  ok(q, 'telemetry query');
  assert.equal(q.body.error, undefined, `telemetry query: ${q.text.slice(0, 200)}`);
  for (const s of (q.body.series ?? []) as { tags: Record<string, string>; columns: string[]; values: [string, number][] }[]) {
    assert.deepEqual(s.columns, ['time', 'v']);
    for (const [time, v] of s.values) points.set(`${s.tags.w}|${Date.parse(time)}`, v);
  }
}

/** Whether the effect of one write is visible: 'all', 'none', or 'partial' (a torn write). Members: see checkLedger. */
export function presence(w: Write, o: Observed): 'all' | 'none' | 'partial' {
  const of = (flags: boolean[]) => (flags.every(Boolean) ? 'all' : flags.some(Boolean) ? 'partial' : 'none');
  switch (w.kind) {
    case 'patch': return of(w.deviceIds.map((id) => o.devices.get(id)?.[w.key] === w.value));
    case 'create': return of([(o.nodeIds.get(w.nodeId) ?? 0) === 1]);
    case 'licenses': return of(w.keys.map((k) => o.licenses.has(k)));
    case 'activate': return of([o.licenses.get(w.key) === w.at]);
    case 'claim': return of([o.claims.get(w.key) === w.nodeId]);
    case 'telemetry': return of(w.points.map((p) => o.points.get(`${w.worker}|${p.ts}`) === p.value));
    default: throw new Error(`presence of ${w.kind}`);
  }
}

export interface LedgerReport {
  acked: number;
  verified: number;
  unknown: number;
  refused: number;
  byKind: Record<string, number>;
}

/**
 * Durability: every acked write present, every unknown one all-or-nothing, every refused one absent; member pairs in a
 * state their answered operations allow; nothing duplicated; no value that was never written.
 */
export function checkLedger(writes: readonly Write[], o: Observed, where: string): LedgerReport {
  const problems: string[] = [];
  const report: LedgerReport = { acked: 0, verified: 0, unknown: 0, refused: 0, byKind: {} };
  // member pairs: the set of states the answered operations allow, folded in order
  const pairStates = new Map<string, Set<'present' | 'absent'>>();
  for (const w of writes) {
    report[w.outcome === 'acked' ? 'acked' : w.outcome]++;
    if (w.outcome === 'acked') report.byKind[w.kind] = (report.byKind[w.kind] ?? 0) + 1;
    if (w.kind === 'member-put' || w.kind === 'member-delete') {
      const pair = `${w.roleId}|${w.email.toLowerCase()}`;
      const states = pairStates.get(pair) ?? new Set(['absent']);
      const effect = w.kind === 'member-put' ? 'present' : 'absent';
      if (w.outcome === 'acked') pairStates.set(pair, new Set([effect]));
      else if (w.outcome === 'unknown') pairStates.set(pair, new Set([...states, effect]));
      else pairStates.set(pair, states);
      if (w.outcome === 'acked') report.verified++;
      continue;
    }
    const seen = presence(w, o);
    if (w.outcome === 'acked' && seen !== 'all') problems.push(`acked ${w.kind} w${w.worker}s${w.seq} is ${seen}: ${JSON.stringify(w)}`);
    else if (w.outcome === 'unknown' && seen === 'partial') problems.push(`unanswered ${w.kind} w${w.worker}s${w.seq} is torn: ${JSON.stringify(w)}`);
    else if (w.outcome === 'refused' && seen !== 'none') problems.push(`refused ${w.kind} w${w.worker}s${w.seq} is ${seen}`);
    else if (w.outcome === 'acked') report.verified++;
  }
  for (const [pair, states] of pairStates) {
    const actual = o.members.has(pair) ? 'present' : 'absent';
    if (!states.has(actual)) problems.push(`member ${pair} is ${actual}, expected ${[...states].join(' or ')}`);
  }
  for (const [nodeId, n] of o.nodeIds) if (n > 1) problems.push(`nodeId ${nodeId} held by ${n} devices`);
  // nothing that was never written: every load property on a device is one of the patches sent to it
  const sent = new Map<string, Extract<Write, { kind: 'patch' }>>();
  for (const w of writes) if (w.kind === 'patch') sent.set(w.key, w);
  for (const [id, props] of o.devices) {
    for (const [k, v] of Object.entries(props)) {
      if (!/^w\d+s\d+$/.test(k)) continue;
      const w = sent.get(k);
      if (!w || !w.deviceIds.includes(id) || w.value !== v) problems.push(`device ${id} holds ${k}=${JSON.stringify(v)}, never written there`);
    }
  }
  assert.deepEqual(problems.slice(0, 20), [], `${where}: ${problems.length} problem(s)`);
  return report;
}
