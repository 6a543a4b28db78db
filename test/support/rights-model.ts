// Reference model of the rights definition (docs/api.md#rights), in memory and written for clarity, to compare the
// SQL engine against on many random installations. It knows nothing about the engine: every rule below is the
// documented rule turned into set operations.
//
//   M(u)       = roles with a member relation (R, u)
//   Reach(S)   = S ∪ every role reachable from S along manages relations (any flags)
//   Reach(u)   = Reach(M(u));  Reach(A) = Reach({A}) for one authorizing role A
//   direct X over T:   (T ∈ Reach(S) and T.selfRights.X)  or  (a relation P → T with flag X and P ∈ Reach(S))
//   indirect X over T: a path R₀ → … → T of ≥ 1 relations with R₀ ∈ S and at least one relation carrying X
// with S = M(u) for the user's rights, and S = {A} for what one authorizing role A meets on its own.

import type { Installation, ManagesRow, MonitorsRow, Right, RoleRow } from './random-installation.ts';

export { RIGHTS } from './random-installation.ts';
export type { Flags6, Installation, Right } from './random-installation.ts';

export type Mode = 'direct' | 'indirect' | 'either';
export const MODES: readonly Mode[] = ['direct', 'indirect', 'either'];

export interface DeviceAccess {
  canRead: boolean;
  monitorManagement: boolean;
  /** 'all' when monitorManagement; otherwise ∪ (reads ∪ edits) over the monitors relations of roles in Reach(u). */
  readable: Set<string> | 'all';
  /** 'all' when monitorManagement; otherwise ∪ edits over those relations. */
  editable: Set<string> | 'all';
}

export class RightsModel {
  private readonly roleById = new Map<number, RoleRow>();
  private readonly relationsFrom = new Map<number, ManagesRow[]>(); // parent role → its outgoing relations
  private readonly relationsInto = new Map<number, ManagesRow[]>(); // child role → its incoming relations
  private readonly rolesOfUser = new Map<number, Set<number>>();
  private readonly monitorsOfDevice = new Map<number, MonitorsRow[]>();
  private readonly reachCache = new Map<string, Set<number>>();
  private readonly targetsCache = new Map<string, Set<number>>();

  constructor(readonly inst: Installation) {
    for (const r of inst.roles) this.roleById.set(r.id, r);
    for (const m of inst.manages) {
      push(this.relationsFrom, m.parentRoleId, m);
      push(this.relationsInto, m.childRoleId, m);
    }
    for (const m of inst.members) {
      let s = this.rolesOfUser.get(m.userId);
      if (!s) this.rolesOfUser.set(m.userId, (s = new Set()));
      s.add(m.roleId);
    }
    for (const m of inst.monitors) push(this.monitorsOfDevice, m.deviceId, m);
  }

  /** M(u): the roles u is a direct member of. */
  memberRoles(userId: number): Set<number> {
    return new Set(this.rolesOfUser.get(userId) ?? []);
  }

  /** Reach(u) = M(u) ∪ every role reachable from M(u). */
  reach(userId: number): Set<number> {
    return new Set(this.reachOf(this.memberRoles(userId)));
  }

  /** Reach(A) = A ∪ every role reachable from A. */
  reachFromRole(roleId: number): Set<number> {
    return new Set(this.reachOf(new Set([roleId])));
  }

  /** Whether u holds right X over role T, acting through all of M(u) at once (the definition's own wording). */
  hasRight(userId: number, roleId: number, right: Right, mode: Mode): boolean {
    return this.holds(this.memberRoles(userId), roleId, right, mode);
  }

  /** The roles A ∈ M(u) that meet the condition on their own (M(u) replaced by {A}). */
  authorizersWithRight(userId: number, roleId: number, right: Right, mode: Mode): Set<number> {
    const out = new Set<number>();
    for (const a of this.memberRoles(userId)) if (this.holds(new Set([a]), roleId, right, mode)) out.add(a);
    return out;
  }

  /** Every role T over which u holds X in this mode (handy for comparing whole answers, e.g. role query userRights). */
  rolesWithRight(userId: number, right: Right, mode: Mode): Set<number> {
    const starts = this.memberRoles(userId);
    const out = new Set<number>();
    for (const r of this.inst.roles) if (this.holds(starts, r.id, right, mode)) out.add(r.id);
    return out;
  }

  /** Access of u to device D: the monitors relations (R, D) with R ∈ Reach(u). */
  deviceAccess(userId: number, deviceId: number): DeviceAccess {
    const reach = this.reachOf(this.memberRoles(userId));
    const relations = (this.monitorsOfDevice.get(deviceId) ?? []).filter((m) => reach.has(m.roleId));
    const canRead = relations.length > 0;
    const monitorManagement = relations.some((m) => m.monitorManagement);
    if (monitorManagement) return { canRead, monitorManagement, readable: 'all', editable: 'all' };
    const readable = new Set<string>();
    const editable = new Set<string>();
    for (const m of relations) {
      for (const p of m.reads) readable.add(p);
      for (const p of m.edits) { readable.add(p); editable.add(p); }
    }
    return { canRead, monitorManagement, readable, editable };
  }

  /** The roles A ∈ M(u) with a monitors relation (R, D, monitorManagement = true) where R ∈ Reach(A). */
  authorizersWithMonitorManagement(userId: number, deviceId: number): Set<number> {
    const out = new Set<number>();
    const managing = (this.monitorsOfDevice.get(deviceId) ?? []).filter((m) => m.monitorManagement);
    for (const a of this.memberRoles(userId)) {
      const reachA = this.reachOf(new Set([a]));
      if (managing.some((m) => reachA.has(m.roleId))) out.add(a);
    }
    return out;
  }

  /** Ids of the devices u may read (at least one monitors relation (R, D) with R ∈ Reach(u)), ascending. */
  readableDevices(userId: number): number[] {
    const reach = this.reachOf(this.memberRoles(userId));
    const ids = new Set<number>();
    for (const m of this.inst.monitors) if (reach.has(m.roleId)) ids.add(m.deviceId);
    return [...ids].sort((a, b) => a - b);
  }

  // ---------------------------------------------------------------------------------------------------------------

  private holds(starts: Set<number>, target: number, right: Right, mode: Mode): boolean {
    const direct = mode !== 'indirect' && this.directTargets(starts, right).has(target);
    const indirect = mode !== 'direct' && this.indirectTargets(starts, right).has(target);
    return direct || indirect;
  }

  /** Reach(S): breadth-first search along manages relations; a role is visited once, so it terminates on any graph. */
  private reachOf(starts: Set<number>): Set<number> {
    const key = setKey(starts);
    const cached = this.reachCache.get(key);
    if (cached) return cached;
    const seen = new Set<number>(starts);
    const queue = [...starts];
    for (let i = 0; i < queue.length; i++) {
      const r = queue[i];
      for (const m of this.relationsFrom.get(r) ?? []) {
        if (!seen.has(m.childRoleId)) { seen.add(m.childRoleId); queue.push(m.childRoleId); }
      }
    }
    this.reachCache.set(key, seen);
    return seen;
  }

  /**
   * The roles T over which S holds X directly:
   *   T ∈ Reach(S) with T.selfRights.X   — selfRights count for T itself only;
   *   or a relation P → T with flag X and P ∈ Reach(S).
   */
  private directTargets(starts: Set<number>, right: Right): Set<number> {
    const key = `direct|${right}|${setKey(starts)}`;
    const cached = this.targetsCache.get(key);
    if (cached) return cached;
    const reach = this.reachOf(starts);
    const out = new Set<number>();
    for (const t of reach) if (this.roleById.get(t)?.selfRights[right]) out.add(t);
    for (const m of this.inst.manages) if (m.flags[right] && reach.has(m.parentRoleId)) out.add(m.childRoleId);
    this.targetsCache.set(key, out);
    return out;
  }

  /**
   * The roles T over which S holds X indirectly: there is a path R₀ → … → T of one or more relations, R₀ ∈ S, on which
   * at least one relation carries X.
   *
   * Search over states (role, seenX), where seenX says whether a relation carrying X has been crossed on the way here.
   * Start: (R₀, false) for each R₀ ∈ S. Crossing a relation P → C moves (P, s) to (C, s || flags.X).
   * A state (T, true) is reachable exactly when some walk from S to T crosses an X relation; such a walk has at least one
   * relation (seenX starts false and only a crossed relation sets it). In a DAG every walk is a path, so this is the
   * path condition verbatim. selfRights play no part here. Each state is visited once (at most 2 per role), so the
   * search visits every relation at most twice. (The test cross-checks it against literal path enumeration.)
   */
  private indirectTargets(starts: Set<number>, right: Right): Set<number> {
    const key = `indirect|${right}|${setKey(starts)}`;
    const cached = this.targetsCache.get(key);
    if (cached) return cached;
    const visited = new Set<string>();
    const queue: Array<[number, boolean]> = [];
    const visit = (role: number, seenX: boolean): void => {
      const k = `${role}|${seenX}`;
      if (!visited.has(k)) { visited.add(k); queue.push([role, seenX]); }
    };
    for (const r of starts) visit(r, false);
    const out = new Set<number>();
    for (let i = 0; i < queue.length; i++) {
      const [role, seenX] = queue[i];
      if (seenX) out.add(role);
      for (const m of this.relationsFrom.get(role) ?? []) visit(m.childRoleId, seenX || m.flags[right]);
    }
    this.targetsCache.set(key, out);
    return out;
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function setKey(s: Set<number>): string {
  return [...s].sort((a, b) => a - b).join(',');
}
