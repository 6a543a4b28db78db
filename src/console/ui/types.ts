// The API's shapes as the console uses them (docs/api.md).
import type { Flags, Right } from './components.tsx';

export interface Role { id: number; name: string; selfRights: Flags; userRights: Partial<Record<Right, boolean>> }
export interface Manages extends Flags { id: number; parentRoleId: number; childRoleId: number }
export interface Member { id: number; roleId: number; userEmail: string }
export interface Monitors { id: number; roleId: number; deviceId: number; monitorManagement: boolean; reads: string[]; edits: string[] }
export interface Device {
  id: number;
  lastUpdate: string;
  properties: Record<string, unknown>;
  userRights: { propertyEditabilities: Record<string, boolean>; monitorManagement: boolean };
}
export interface License {
  id: string; key: string; gridKw: number | null; solarKw: number | null; batteryKw: number | null; evKw: number | null;
  creationDate: string; activationDate: string | null; duration: number; deactivationDate: string | null; type: 'residential' | 'commercial';
}
export interface DeletionInfo { deletedNodeIds: number[]; deletedRelationIds: number[] }
export interface ExplainStep {
  kind: 'member' | 'manages' | 'monitors'; id: number; roleId?: number; userEmail?: string; parentRoleId?: number; childRoleId?: number;
  deviceId?: number; monitorManagement?: boolean; reads?: string[]; edits?: string[]; [flag: string]: unknown;
}
export interface Explain { allowed: boolean; grantedBy?: string; via: ExplainStep[] }

/** The signed-in user as the console knows them. */
export interface Me { email: string; isRoot: boolean }
