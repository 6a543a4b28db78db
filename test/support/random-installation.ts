// Seeded random installations (roles, manages, members, users, devices, monitors) as plain data, for comparing
// the SQL rights engine with the in-memory reference model (test/support/rights-model.ts) on many random graphs.
// Same seed and size → the same installation (own PRNG, no Math.random).
import { mulberry32 as baseGenerator } from './random.mjs';

export const RIGHTS = [
  'roleManagement',
  'userManagement',
  'viewManagement',
  'deviceManagement',
  'reportManagement',
  'alarmManagement',
] as const;
export type Right = (typeof RIGHTS)[number];
export type Flags6 = Record<Right, boolean>;

/** The property names monitors relations draw from; small, so read and edit sets overlap. */
export const PROPERTY_ALPHABET = ['a', 'b', 'c', 'd', 'e', 'f'] as const;

export interface RoleRow { id: number; selfRights: Flags6 }
export interface ManagesRow { id: number; parentRoleId: number; childRoleId: number; flags: Flags6 }
export interface MemberRow { id: number; roleId: number; userId: number }
export interface UserRow { id: number }
export interface DeviceRow { id: number }
export interface MonitorsRow {
  id: number;
  roleId: number;
  deviceId: number;
  monitorManagement: boolean;
  reads: string[];
  edits: string[];
}

export interface Installation {
  roles: RoleRow[];
  manages: ManagesRow[];
  members: MemberRow[];
  users: UserRow[];
  devices: DeviceRow[];
  monitors: MonitorsRow[];
}

export const SHAPES = ['chain', 'tree', 'sparse', 'dense', 'diamonds', 'layered', 'forest'] as const;
export type Shape = (typeof SHAPES)[number];

export interface InstallationSize {
  roles: number;
  users: number;
  devices: number;
  /** Total monitors relations; at least one per device. Default: drawn from the seed (about 1.5–3 per device). */
  monitors?: number;
  /** Shape of the manages graph. Default: drawn from the seed. */
  shape?: Shape;
  /**
   * true: role 1 comes first in the topological order, has all six selfRights, and every other role has at least one
   * parent (the shape the API produces). false: role 1 is an ordinary role and several roles may have no parent.
   * Default: drawn from the seed.
   */
  rooted?: boolean;
  /** Mean probability of each flag on a manages relation. Default: drawn from the seed (0.05–0.35). */
  flagProbability?: number;
  /** Probability of each selfRight of a (non-root) role. Default: drawn from the seed (0.03–0.3). */
  selfRightProbability?: number;
}

/** The random installation plus the parameters that were drawn, to make a failing seed easy to describe. */
export interface RandomInstallation extends Installation {
  params: Required<InstallationSize> & { seed: number };
}

/** The installations' generator: support/random.mjs's, its seed mixed first (the oracles' seeds stay as they were). */
export function mulberry32(seed: number): () => number {
  return baseGenerator(Math.trunc(seed) ^ 0x9e3779b9);
}

class Rng {
  private readonly next: () => number;
  constructor(seed: number) { this.next = mulberry32(seed); }
  float(): number { return this.next(); }
  /** Integer in [lo, hi] inclusive. */
  int(lo: number, hi: number): number { return lo + Math.floor(this.next() * (hi - lo + 1)); }
  chance(p: number): boolean { return this.next() < p; }
  pick<T>(xs: readonly T[]): T { return xs[Math.floor(this.next() * xs.length)]; }
  shuffle<T>(xs: T[]): T[] {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [xs[i], xs[j]] = [xs[j], xs[i]];
    }
    return xs;
  }
}

export function noFlags(): Flags6 {
  return {
    roleManagement: false, userManagement: false, viewManagement: false,
    deviceManagement: false, reportManagement: false, alarmManagement: false,
  };
}

export function allFlags(): Flags6 {
  return {
    roleManagement: true, userManagement: true, viewManagement: true,
    deviceManagement: true, reportManagement: true, alarmManagement: true,
  };
}

/**
 * A random installation. Ids: roles are 1..roles; every other id (users, devices, manages, members, monitors) comes
 * from one running counter after the roles, so no two objects of any kind share an id — a test that confuses a
 * device id with a monitors id (or a user id with a role id) fails instead of passing by accident.
 */
export function randomInstallation(seed: number, size: InstallationSize): RandomInstallation {
  const rng = new Rng(seed);
  const nRoles = Math.max(1, Math.floor(size.roles));
  const nUsers = Math.max(0, Math.floor(size.users));
  const nDevices = Math.max(0, Math.floor(size.devices));

  // Draw every parameter first, in a fixed order, so an explicit parameter does not change the others' draws.
  const drawnShape = rng.pick(SHAPES);
  const drawnRooted = rng.chance(0.5);
  const drawnFlagP = rng.pick([0.05, 0.1, 0.2, 0.35]);
  const drawnSelfP = rng.pick([0.03, 0.1, 0.3]);
  const drawnMonitors = nDevices + Math.round(nDevices * (0.5 + rng.float() * 1.5));
  const shape = size.shape ?? drawnShape;
  const rooted = size.rooted ?? drawnRooted;
  const flagProbability = size.flagProbability ?? drawnFlagP;
  const selfRightProbability = size.selfRightProbability ?? drawnSelfP;
  const monitorsWanted = Math.max(nDevices, Math.floor(size.monitors ?? drawnMonitors));

  // Each right gets its own probability around the mean, so some rights are rare and some common in one installation.
  const flagP = {} as Record<Right, number>;
  for (const r of RIGHTS) flagP[r] = Math.min(0.9, flagProbability * (0.3 + 1.4 * rng.float()));
  const randomFlags = (p: Record<Right, number> | number): Flags6 => {
    const f = noFlags();
    for (const r of RIGHTS) f[r] = rng.chance(typeof p === 'number' ? p : p[r]);
    return f;
  };

  // ---- roles and the topological order
  const roleIds = Array.from({ length: nRoles }, (_, i) => i + 1);
  const order = rooted ? [1, ...rng.shuffle(roleIds.slice(1))] : rng.shuffle(roleIds.slice());
  const roles: RoleRow[] = roleIds.map((id) => ({
    id,
    selfRights: rooted && id === 1 ? allFlags() : randomFlags(selfRightProbability),
  }));

  // ---- manages edges, only forward in `order` (position i → position j with i < j), so the graph is a DAG.
  const edgeKeys = new Set<string>();
  const edges: Array<[number, number]> = []; // positions in `order`
  const hasParent = new Array<boolean>(nRoles).fill(false);
  const addEdge = (i: number, j: number): void => {
    if (i === j) return;
    const [a, b] = i < j ? [i, j] : [j, i];
    if (b >= nRoles) return;
    const key = `${a}>${b}`;
    if (edgeKeys.has(key)) return;
    edgeKeys.add(key);
    edges.push([a, b]);
    hasParent[b] = true;
  };
  const n = nRoles;
  switch (shape) {
    case 'chain': {
      for (let j = 1; j < n; j++) addEdge(j - 1, j);
      for (let k = 0; k < Math.floor(n / 8); k++) addEdge(rng.int(0, n - 1), rng.int(0, n - 1)); // a few shortcuts
      break;
    }
    case 'tree': {
      const deep = rng.chance(0.5);
      for (let j = 1; j < n; j++) addEdge(deep ? rng.int(Math.max(0, j - 3), j - 1) : rng.int(0, j - 1), j);
      break;
    }
    case 'sparse': {
      for (let j = 1; j < n; j++) {
        const parents = rng.pick([0, 1, 1, 1, 2, 2, 3]);
        for (let k = 0; k < parents; k++) addEdge(rng.int(0, j - 1), j);
      }
      break;
    }
    case 'dense': {
      // Dense for small graphs; capped at about 6 relations per role on average for large ones.
      const p = Math.min(0.5, 12 / n);
      for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) if (rng.chance(p)) addEdge(i, j);
      break;
    }
    case 'diamonds': {
      // top → left, top → right, left → bottom, right → bottom; each bottom is the next diamond's top.
      let t = 0;
      while (t + 3 < n) {
        addEdge(t, t + 1); addEdge(t, t + 2); addEdge(t + 1, t + 3); addEdge(t + 2, t + 3);
        if (rng.chance(0.2)) addEdge(t, t + 3); // a shortcut across the diamond
        t += 3;
      }
      for (let j = t + 1; j < n; j++) addEdge(rng.int(0, j - 1), j);
      for (let k = 0; k < Math.floor(n / 10); k++) addEdge(rng.int(0, n - 1), rng.int(0, n - 1));
      break;
    }
    case 'layered': {
      const layerCount = Math.min(n, rng.int(2, 6));
      const layerOf = (pos: number): number => Math.floor((pos * layerCount) / n);
      const layers: number[][] = Array.from({ length: layerCount }, () => []);
      for (let pos = 0; pos < n; pos++) layers[layerOf(pos)].push(pos);
      const q = rng.pick([0.15, 0.3, 0.6]);
      for (let L = 1; L < layerCount; L++) {
        for (const c of layers[L]) {
          for (const p of layers[L - 1]) if (rng.chance(q)) addEdge(p, c);
          if (L >= 2 && rng.chance(0.1)) addEdge(rng.pick(layers[L - 2]), c); // skip a layer
        }
      }
      break;
    }
    case 'forest': {
      const roots = Math.min(n, rng.int(2, 5));
      for (let j = roots; j < n; j++) {
        addEdge(rng.int(0, j - 1), j);
        if (rng.chance(0.15)) addEdge(rng.int(0, j - 1), j); // occasionally a second parent
      }
      break;
    }
  }
  if (rooted) {
    // Every role other than the first must have a parent; pick one among the earlier roles.
    for (let j = 1; j < n; j++) if (!hasParent[j]) addEdge(rng.int(0, j - 1), j);
  }

  let nextId = nRoles + 1;
  const users: UserRow[] = [];
  for (let k = 0; k < nUsers; k++) users.push({ id: nextId++ });
  const devices: DeviceRow[] = [];
  for (let k = 0; k < nDevices; k++) devices.push({ id: nextId++ });

  const manages: ManagesRow[] = edges.map(([i, j]) => ({
    id: nextId++,
    parentRoleId: order[i],
    childRoleId: order[j],
    flags: randomFlags(flagP),
  }));

  // ---- members: about a quarter of the roles never get members; users are in 0..4 roles.
  const memberless = new Set(rng.shuffle(roleIds.slice()).slice(0, Math.floor(nRoles / 4)));
  const eligible = roleIds.filter((id) => !memberless.has(id));
  const members: MemberRow[] = [];
  for (const u of users) {
    const count = Math.min(eligible.length, rng.pick([0, 1, 1, 1, 1, 2, 2, 2, 3, 4]));
    const chosen = rng.shuffle(eligible.slice()).slice(0, count).sort((a, b) => a - b);
    for (const roleId of chosen) members.push({ id: nextId++, roleId, userId: u.id });
  }

  // ---- monitors: every device has one relation with monitorManagement (as the API guarantees), then extra relations.
  const randomProps = (p: number): string[] => PROPERTY_ALPHABET.filter(() => rng.chance(p));
  const monitorKeys = new Set<string>();
  const monitors: MonitorsRow[] = [];
  const addMonitor = (roleId: number, deviceId: number, monitorManagement: boolean): void => {
    const key = `${roleId}:${deviceId}`;
    if (monitorKeys.has(key)) return;
    monitorKeys.add(key);
    monitors.push({ id: nextId++, roleId, deviceId, monitorManagement, reads: randomProps(0.3), edits: randomProps(0.2) });
  };
  for (const d of devices) addMonitor(rng.pick(roleIds), d.id, true);
  const maxPairs = nRoles * nDevices;
  for (let attempts = 0; monitors.length < Math.min(monitorsWanted, maxPairs) && attempts < monitorsWanted * 20; attempts++) {
    addMonitor(rng.pick(roleIds), rng.pick(devices).id, rng.chance(0.1));
  }

  return {
    roles, manages, members, users, devices, monitors,
    params: {
      seed, roles: nRoles, users: nUsers, devices: nDevices, monitors: monitorsWanted,
      shape, rooted, flagProbability, selfRightProbability,
    },
  };
}

/**
 * Structural problems of an installation (empty when it is well formed): duplicate ids, dangling references,
 * self-loops, two relations for one ordered pair, cycles, duplicate member or monitors pairs, unknown properties.
 */
export function installationProblems(inst: Installation): string[] {
  const problems: string[] = [];
  const roleIds = new Set(inst.roles.map((r) => r.id));
  const userIds = new Set(inst.users.map((u) => u.id));
  const deviceIds = new Set(inst.devices.map((d) => d.id));
  const idsOf: Array<[string, number[]]> = [
    ['role', inst.roles.map((r) => r.id)],
    ['user', inst.users.map((u) => u.id)],
    ['device', inst.devices.map((d) => d.id)],
    ['manages', inst.manages.map((m) => m.id)],
    ['member', inst.members.map((m) => m.id)],
    ['monitors', inst.monitors.map((m) => m.id)],
  ];
  for (const [kind, ids] of idsOf) {
    if (new Set(ids).size !== ids.length) problems.push(`duplicate ${kind} ids`);
    for (const id of ids) if (!Number.isInteger(id) || id < 1) problems.push(`${kind} id ${id} is not an integer >= 1`);
  }
  const pairs = new Set<string>();
  for (const m of inst.manages) {
    if (!roleIds.has(m.parentRoleId) || !roleIds.has(m.childRoleId)) problems.push(`manages ${m.id} references an unknown role`);
    if (m.parentRoleId === m.childRoleId) problems.push(`manages ${m.id} is a self-loop`);
    const key = `${m.parentRoleId}>${m.childRoleId}`;
    if (pairs.has(key)) problems.push(`two manages relations ${key}`);
    pairs.add(key);
  }
  // Kahn's algorithm: every role gets removed exactly when the graph has no cycle.
  const indegree = new Map<number, number>([...roleIds].map((id) => [id, 0]));
  for (const m of inst.manages) indegree.set(m.childRoleId, (indegree.get(m.childRoleId) ?? 0) + 1);
  const queue = [...indegree].filter(([, d]) => d === 0).map(([id]) => id);
  let removed = 0;
  while (queue.length > 0) {
    const r = queue.pop()!;
    removed++;
    for (const m of inst.manages) {
      if (m.parentRoleId !== r) continue;
      const d = indegree.get(m.childRoleId)! - 1;
      indegree.set(m.childRoleId, d);
      if (d === 0) queue.push(m.childRoleId);
    }
  }
  if (removed !== indegree.size) problems.push('the manages graph has a cycle');
  const memberPairs = new Set<string>();
  for (const m of inst.members) {
    if (!roleIds.has(m.roleId) || !userIds.has(m.userId)) problems.push(`member ${m.id} references an unknown role or user`);
    const key = `${m.roleId}:${m.userId}`;
    if (memberPairs.has(key)) problems.push(`two member relations ${key}`);
    memberPairs.add(key);
  }
  const monitorPairs = new Set<string>();
  const alphabet = new Set<string>(PROPERTY_ALPHABET);
  for (const m of inst.monitors) {
    if (!roleIds.has(m.roleId) || !deviceIds.has(m.deviceId)) problems.push(`monitors ${m.id} references an unknown role or device`);
    const key = `${m.roleId}:${m.deviceId}`;
    if (monitorPairs.has(key)) problems.push(`two monitors relations ${key}`);
    monitorPairs.add(key);
    for (const p of [...m.reads, ...m.edits]) if (!alphabet.has(p)) problems.push(`monitors ${m.id} has property ${p}`);
  }
  return problems;
}
