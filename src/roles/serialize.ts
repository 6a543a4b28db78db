// Public JSON of roles, manages and member relations (Lucia's rule: never a raw row). A role's password hash is never
// selected for serialization, so it cannot leak through here.
import type { Right } from '../access/rights.ts';
import type { ManagesTable, RolesTable } from '../db/schema.ts';

export type Flags = Record<Right, boolean>;

/** The role columns a serializer may see (no password_hash). */
export const ROLE_COLUMNS = [
  'id', 'name', 'self_role_management', 'self_user_management', 'self_view_management',
  'self_device_management', 'self_report_management', 'self_alarm_management', 'is_company', 'uuid',
] as const satisfies readonly (keyof RolesTable)[];
export interface RoleRow {
  id: number; name: string;
  self_role_management: number; self_user_management: number; self_view_management: number;
  self_device_management: number; self_report_management: number; self_alarm_management: number;
  is_company: number; uuid: string | null;
}

export const MANAGES_COLUMNS = [
  'id', 'parent_role_id', 'child_role_id', 'role_management', 'user_management', 'view_management',
  'device_management', 'report_management', 'alarm_management',
] as const satisfies readonly (keyof ManagesTable)[];
export interface ManagesRow {
  id: number; parent_role_id: number; child_role_id: number;
  role_management: number; user_management: number; view_management: number;
  device_management: number; report_management: number; alarm_management: number;
}

export interface MemberRow { id: number; role_id: number; email: string }

/** `isCompany` and `uuid` (companies only) are ours; the rest is the Eniris role. */
export interface Role { id: number; name: string; selfRights: Flags; userRights: Partial<Flags>; isCompany: boolean; uuid?: string }
export type Manages = { id: number; parentRoleId: number; childRoleId: number } & Flags;
export interface Member { id: number; roleId: number; userEmail: string }

type Bit = 0 | 1;
const bit = (b: boolean): Bit => (b ? 1 : 0);

/** Flags6 -> the 0/1 flag columns of a manages row. */
export function managesColumns(f: Flags): Pick<ManagesTable, 'role_management' | 'user_management' | 'view_management' | 'device_management' | 'report_management' | 'alarm_management'> {
  return {
    role_management: bit(f.roleManagement), user_management: bit(f.userManagement), view_management: bit(f.viewManagement),
    device_management: bit(f.deviceManagement), report_management: bit(f.reportManagement), alarm_management: bit(f.alarmManagement),
  };
}

/** Flags6 -> a role's self_* columns. */
export function selfRightsColumns(f: Flags): Pick<RolesTable, 'self_role_management' | 'self_user_management' | 'self_view_management' | 'self_device_management' | 'self_report_management' | 'self_alarm_management'> {
  return {
    self_role_management: bit(f.roleManagement), self_user_management: bit(f.userManagement), self_view_management: bit(f.viewManagement),
    self_device_management: bit(f.deviceManagement), self_report_management: bit(f.reportManagement), self_alarm_management: bit(f.alarmManagement),
  };
}

/** `userRights` holds exactly the requested flags (flags not requested are absent: docs/api.md#roles). */
// Object literals, not loops over RIGHTS: a role query serializes up to every role of the installation, and building
// keys per row made serialization the largest cost of POST /v1/role/query.
export function toRole(row: RoleRow, userRights: Partial<Flags> = {}): Role {
  const role: Role = {
    id: row.id,
    name: row.name,
    selfRights: {
      roleManagement: row.self_role_management === 1, userManagement: row.self_user_management === 1,
      viewManagement: row.self_view_management === 1, deviceManagement: row.self_device_management === 1,
      reportManagement: row.self_report_management === 1, alarmManagement: row.self_alarm_management === 1,
    },
    userRights,
    isCompany: row.is_company === 1,
  };
  // a company's uuid only: a role that was one once keeps its uuid stored, but it names nothing while the mark is off
  if (row.is_company === 1 && row.uuid !== null) role.uuid = row.uuid;
  return role;
}

export function toManages(row: ManagesRow): Manages {
  return {
    id: row.id, parentRoleId: row.parent_role_id, childRoleId: row.child_role_id,
    roleManagement: row.role_management === 1, userManagement: row.user_management === 1, viewManagement: row.view_management === 1,
    deviceManagement: row.device_management === 1, reportManagement: row.report_management === 1, alarmManagement: row.alarm_management === 1,
  };
}

export function toMember(row: MemberRow): Member {
  return { id: row.id, roleId: row.role_id, userEmail: row.email };
}
