// Kysely table types. Column names are the SQL ones (snake_case); serializers map rows to the wire format.
// Flags are stored as 0/1 integers; times as Unix milliseconds.
import type { Generated } from 'kysely';

type Flag = 0 | 1;

export interface SettingsTable { key: string; value: string }

export interface SigningKeysTable {
  kid: string;
  private_jwk: string;
  public_jwk: string;
  created_at: number;
  retired_at: number | null;
}

/** A user's telemetry query tier (docs/api.md#rate-limit). */
export type Tier = 'free' | 'basic' | 'premium';

export interface UsersTable {
  id: Generated<number>;
  email: string;
  password_hash: string;
  tier: Generated<Tier>;
  password_changed_at: number;
  /** incremented by a password change: tokens carry it as `gen` (sql/0008_security.sql) */
  token_generation: Generated<number>;
  created_at: number;
}

export interface JoinFailuresTable {
  id: Generated<number>;
  user_id: number;
  ip_key: string;
  at: number;
}

export interface RolesTable {
  id: Generated<number>;
  name: string;
  self_role_management: Flag;
  self_user_management: Flag;
  self_view_management: Flag;
  self_device_management: Flag;
  self_report_management: Flag;
  self_alarm_management: Flag;
  password_hash: string | null;
  created_at: number;
  is_company: Generated<Flag>;
  /** drawn when the role is first marked as a company, kept from then on */
  uuid: string | null;
}

export interface ManagesTable {
  id: Generated<number>;
  parent_role_id: number;
  child_role_id: number;
  role_management: Flag;
  user_management: Flag;
  view_management: Flag;
  device_management: Flag;
  report_management: Flag;
  alarm_management: Flag;
}

export interface MembersTable {
  id: Generated<number>;
  role_id: number;
  user_id: number;
}

export interface DevicesTable {
  id: Generated<number>;
  /** JSON text of the properties object */
  properties: string;
  last_update: number;
  created_at: number;
  /** generated from properties.nodeId / properties.nodeType; read-only */
  node_id: Generated<unknown>;
  node_type: Generated<unknown>;
}

export interface MonitorsTable {
  id: Generated<number>;
  role_id: number;
  device_id: number;
  monitor_management: Flag;
  /** JSON text of a string array */
  reads: string;
  edits: string;
}

export interface LicensesTable {
  id: string;
  key: string;
  type: 'residential' | 'commercial';
  duration: number;
  grid_kw: number | null;
  solar_kw: number | null;
  battery_kw: number | null;
  ev_kw: number | null;
  creation_date: number;
  activation_date: number | null;
}

export interface LicenseDatalinkTable {
  id: Generated<number>;
  license_id: string;
  device_id: number;
  created_at: number;
  /** set by a trigger on insert (the Eniris API names links by uuid) */
  uuid: string | null;
}

export interface CustomersTable {
  id: string;
  name: string;
  role_id: number;
  creation_date: number;
}

export interface OrdersTable {
  id: string;
  customer_id: string;
  creation_date: number;
}

export interface OrderLicensesTable {
  order_id: string;
  license_id: string;
  position: number;
}

export interface PasswordResetTokensTable {
  id: Generated<number>;
  user_id: number;
  token_hash: Buffer;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface PasswordResetRequestsTable {
  id: Generated<number>;
  scope: 'email' | 'ip';
  subject: string;
  at: number;
}

export interface SessionsTable {
  sid: string;
  user_id: number;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export interface ApiTokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  /** JSON array of scopes */
  scopes: string;
  token_hash: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
}

export interface TwoFactorTable {
  user_id: number;
  totp_secret: string | null;
  totp_enabled_at: number | null;
  totp_last_step: number | null;
  pending_secret: string | null;
  pending_at: number | null;
  recovery_codes_at: number | null;
}

export interface RecoveryCodesTable {
  id: Generated<number>;
  user_id: number;
  hash_key: Buffer;
  code_hash: Buffer;
  used_at: number | null;
}

export interface AuthFailuresTable {
  id: Generated<number>;
  scope: 'password-user' | 'password-ip' | 'totp' | 'recovery-code';
  subject: string;
  at: number;
}

export interface TelemetryNamespacesTable {
  id: Generated<number>;
  /** namespaceKey() of the namespace */
  key: string;
  /** JSON text of the Namespace object */
  namespace: string;
  interval_ms: number;
  shard_duration_ms: number;
  worst_case_range_ms: number;
  created_at: number;
}

export interface TelemetryShardsTable {
  namespace_id: number;
  shard_window: number;
  table_name: string;
  start_ms: number;
  end_ms: number;
  /** value columns c0 .. c<columns - 1> */
  columns: number;
  created_at: number;
}

export interface TelemetrySealedTable {
  namespace_id: number;
  shard_window: number;
  start_ms: number;
  end_ms: number;
}

export interface TelemetryBlocksTable {
  series_id: number;
  start_ms: number;
  namespace_id: number;
  rows: number;
  first_ms: number;
  last_ms: number;
  stats: Uint8Array;
  data: Uint8Array;
}

export interface TelemetrySeriesTable {
  id: Generated<number>;
  namespace_id: number;
  measurement: string;
  /** JSON text of the full tag set, keys sorted */
  tags: string;
  node_id: string;
  created_at: number;
}

export interface TelemetryFieldsTable {
  namespace_id: number;
  measurement: string;
  field: string;
  ordinal: number;
  type: 'float' | 'integer' | 'unsigned' | 'string' | 'boolean';
}

export interface AuditLogTable {
  id: Generated<number>;
  at: number;
  actor_user_id: number | null;
  actor_email: string | null;
  actor_token: 'access' | 'sudo' | 'refresh' | 'partial' | 'api' | null;
  actor_api_token: number | null;
  client_address: string | null;
  request_id: string | null;
  action: string;
  target_kind: 'role' | 'manages' | 'member' | 'device' | 'monitors' | 'license' | 'user' | 'customer' | 'order' | 'api-token';
  target_id: string | null;
  role_id: number | null;
  device_id: number | null;
  user_id: number | null;
  /** JSON text of the changes object */
  changes: string;
}

/** An audit entry as written: the id is generated, and the actor's e-mail is read by the insert itself. */
export type AuditInsert = Omit<AuditLogTable, 'id' | 'actor_email'>;

export interface SchemaMigrationsTable { name: string; applied_at: number }

export interface Schema {
  settings: SettingsTable;
  signing_keys: SigningKeysTable;
  users: UsersTable;
  join_failures: JoinFailuresTable;
  roles: RolesTable;
  manages: ManagesTable;
  members: MembersTable;
  devices: DevicesTable;
  monitors: MonitorsTable;
  licenses: LicensesTable;
  license_datalink: LicenseDatalinkTable;
  schema_migrations: SchemaMigrationsTable;
  sessions: SessionsTable;
  two_factor: TwoFactorTable;
  api_tokens: ApiTokensTable;
  recovery_codes: RecoveryCodesTable;
  auth_failures: AuthFailuresTable;
  telemetry_namespaces: TelemetryNamespacesTable;
  telemetry_shards: TelemetryShardsTable;
  telemetry_series: TelemetrySeriesTable;
  telemetry_fields: TelemetryFieldsTable;
  telemetry_blocks: TelemetryBlocksTable;
  telemetry_sealed: TelemetrySealedTable;
  customers: CustomersTable;
  orders: OrdersTable;
  order_licenses: OrderLicensesTable;
  password_reset_tokens: PasswordResetTokensTable;
  password_reset_requests: PasswordResetRequestsTable;
  audit_log: AuditLogTable;
}
