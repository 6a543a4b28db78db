// GET /v1/access/explain (ours): does the caller hold a right, and through which shortest chain of relations?
// One recursive CTE fetches the target's ancestor subgraph (few roles, even in a wide installation); a breadth-first
// search in JS from the caller's member roles then finds the shortest granting chain. Ties go to the lowest ids, so the
// answer is deterministic. The verdict itself always agrees with src/access/rights.ts (tests compare both).
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/open.ts';
import { RIGHT_COLUMN, type Right, type RightMode } from './rights.ts';

export interface ManagesEdge {
  id: number; parent_role_id: number; child_role_id: number;
  role_management: number; user_management: number; view_management: number;
  device_management: number; report_management: number; alarm_management: number;
}
export interface MemberLink { id: number; role_id: number; email: string }
export interface MonitorsLink { id: number; role_id: number; device_id: number; monitor_management: 0 | 1; reads: string; edits: string }

export type Step =
  | { kind: 'member'; row: MemberLink }
  | { kind: 'manages'; row: ManagesEdge }
  | { kind: 'monitors'; row: MonitorsLink };

export type Grant = 'selfRights' | 'manages' | 'monitorManagement' | 'edits' | 'reads' | 'monitors';

export interface Explanation { allowed: boolean; grantedBy?: Grant; via: Step[] }

const DENIED: Explanation = { allowed: false, via: [] };

/** The ancestors of `start`'s roles (themselves included), the manages edges among them, and u's member relations there. */
async function ancestorGraph(db: Db, userId: number, start: RawBuilder<unknown>): Promise<{ edges: ManagesEdge[]; members: MemberLink[] }> {
  const up = sql`WITH RECURSIVE up(id) AS (${start} UNION SELECT m.parent_role_id FROM manages m JOIN up ON m.child_role_id = up.id)`;
  const edges = await db.all(sql<ManagesEdge>`${up} SELECT m.* FROM manages m WHERE m.child_role_id IN (SELECT id FROM up) ORDER BY m.id`);
  const members = await db.all(sql<MemberLink>`${up} SELECT mb.id AS id, mb.role_id AS role_id, u.email AS email
    FROM members mb JOIN users u ON u.id = mb.user_id WHERE mb.user_id = ${userId} AND mb.role_id IN (SELECT id FROM up) ORDER BY mb.role_id`);
  return { edges, members };
}

interface Visit { member?: MemberLink; prev?: string; edge?: ManagesEdge; dist: number }

/**
 * BFS over states `role:crossed` (crossed = a relation carrying `flag` is on the path; flag undefined = plain walk).
 * Returns the first (shortest) visit of every state.
 */
function bfs(edges: ManagesEdge[], members: MemberLink[], flag?: string): Map<string, Visit> {
  const out = new Map<string, Visit>();
  const children = new Map<number, ManagesEdge[]>();
  for (const e of edges) {
    const list = children.get(e.parent_role_id);
    if (list) list.push(e); else children.set(e.parent_role_id, [e]);
  }
  const queue: [number, number][] = [];
  for (const m of members) {
    const key = `${m.role_id}:0`;
    if (!out.has(key)) { out.set(key, { member: m, dist: 0 }); queue.push([m.role_id, 0]); }
  }
  for (let i = 0; i < queue.length; i++) {
    const [role, crossed] = queue[i];
    const from = `${role}:${crossed}`;
    for (const e of children.get(role) ?? []) {
      const next = flag && (e as unknown as Record<string, number>)[flag] === 1 ? 1 : crossed;
      const key = `${e.child_role_id}:${next}`;
      if (out.has(key)) continue;
      out.set(key, { prev: from, edge: e, dist: out.get(from)!.dist + 1 });
      queue.push([e.child_role_id, next]);
    }
  }
  return out;
}

function chainTo(visits: Map<string, Visit>, key: string): Step[] {
  const steps: Step[] = [];
  for (let v = visits.get(key); v; v = v.prev ? visits.get(v.prev) : undefined) {
    if (v.edge) steps.push({ kind: 'manages', row: v.edge });
    if (v.member) steps.push({ kind: 'member', row: v.member });
  }
  return steps.reverse();
}

const best = (visits: Map<string, Visit>, role: number) =>
  [`${role}:0`, `${role}:1`].filter((k) => visits.has(k)).sort((a, b) => visits.get(a)!.dist - visits.get(b)!.dist)[0];

/** Right X over role T (docs/api.md#role-rights) in the given mode. Call only for a T the caller can see. */
export async function explainRoleRight(db: Db, userId: number, roleId: number, right: Right, mode: RightMode): Promise<Explanation> {
  const col = RIGHT_COLUMN[right];
  const { edges, members } = await ancestorGraph(db, userId, sql`SELECT CAST(${roleId} AS BIGINT)`);
  const visits = bfs(edges, members, col);
  const target = await db.get(sql<{ self: number }>`SELECT ${sql.ref(`self_${col}`)} AS self FROM roles WHERE id = ${roleId}`);
  const self = target?.self === 1;
  const candidates: { grant: Grant; via: Step[] }[] = [];
  // direct through T's own flag: any path to T
  if (mode !== 'indirect' && self) {
    const key = best(visits, roleId);
    if (key) candidates.push({ grant: 'selfRights', via: chainTo(visits, key) });
  }
  // indirect: a path crossing at least one X relation
  if (mode !== 'direct' && visits.has(`${roleId}:1`)) candidates.push({ grant: 'manages', via: chainTo(visits, `${roleId}:1`) });
  // direct through a relation: any path to a parent P, then P -> T carrying X
  if (mode === 'direct') {
    for (const e of edges) {
      if (e.child_role_id !== roleId || (e as unknown as Record<string, number>)[col] !== 1) continue;
      const key = best(visits, e.parent_role_id);
      if (key) candidates.push({ grant: 'manages', via: [...chainTo(visits, key), { kind: 'manages', row: e }] });
    }
  }
  if (candidates.length === 0) return DENIED;
  const shortest = candidates.reduce((a, b) => (b.via.length < a.via.length ? b : a));
  return { allowed: true, grantedBy: shortest.grant, via: shortest.via };
}

export type DeviceAction = 'read' | 'edit';

/**
 * May the caller read / edit `property` of device D (no property: read = read the device at all, edit = edit every
 * property, i.e. monitorManagement)? undefined when the caller cannot read D at all (the route answers 404).
 */
export async function explainDeviceAccess(db: Db, userId: number, deviceId: number, action: DeviceAction, property?: string): Promise<Explanation | undefined> {
  const monitors = await db.all(sql<MonitorsLink>`SELECT id, role_id, device_id, monitor_management, reads, edits FROM monitors WHERE device_id = ${deviceId} ORDER BY id`);
  if (monitors.length === 0) return undefined;
  const { edges, members } = await ancestorGraph(db, userId, sql`SELECT role_id FROM monitors WHERE device_id = ${deviceId}`);
  const visits = bfs(edges, members);
  const reached = monitors.filter((m) => visits.has(`${m.role_id}:0`));
  if (reached.length === 0) return undefined;
  const grantOf = (m: MonitorsLink): Grant | undefined => {
    if (m.monitor_management === 1) return 'monitorManagement';
    if (property === undefined) return action === 'read' ? 'monitors' : undefined;
    if ((JSON.parse(m.edits) as string[]).includes(property)) return 'edits';
    if (action === 'read' && (JSON.parse(m.reads) as string[]).includes(property)) return 'reads';
    return undefined;
  };
  let winner: { m: MonitorsLink; grant: Grant; dist: number } | undefined;
  for (const m of reached) {
    const grant = grantOf(m);
    const dist = visits.get(`${m.role_id}:0`)!.dist;
    if (grant && (!winner || dist < winner.dist)) winner = { m, grant, dist };
  }
  if (!winner) return DENIED;
  return { allowed: true, grantedBy: winner.grant, via: [...chainTo(visits, `${winner.m.role_id}:0`), { kind: 'monitors', row: winner.m }] };
}
