// Request and response schemas of the license API (validation and the OpenAPI document), and the one serializer.
import * as v from 'valibot';
import type { LicensesTable } from '../db/schema.ts';
import { parseIsoWithOffset } from '../lib/time-text.ts';
import { created, type AuditEvent } from '../audit/record.ts';

const DAY_MS = 86_400_000;
export const MAX_DURATION_DAYS = 36_500;
export const MAX_COUNT = 1000;
/** the last instant with a four-digit year: every date we answer stays in the plain ISO 8601 form */
const MAX_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const int = (what: string, min: number, max: number) => v.pipe(
  v.number(), v.integer(`expected ${what}`), v.minValue(min, `expected ${what}`), v.maxValue(max, `expected ${what}`),
);

const Kw = v.optional(v.nullable(int('an integer from 0 to 1000000 (kW) or null', 0, 1_000_000)), null);

/** A key as typed by a person: surrounding whitespace is dropped, the rest is matched exactly (case-sensitive). */
const TypedKey = v.pipe(
  v.string(), v.trim(),
  v.minLength(1, 'expected a non-empty key'), v.maxLength(50, 'expected at most 50 characters'),
);

export const CreateLicenseBody = v.pipe(
  v.strictObject({
    type: v.picklist(['residential', 'commercial'], 'expected residential or commercial'),
    duration: int(`an integer number of days from 1 to ${MAX_DURATION_DAYS}`, 1, MAX_DURATION_DAYS),
    gridKw: Kw,
    solarKw: Kw,
    batteryKw: Kw,
    evKw: Kw,
    count: v.optional(int(`an integer from 1 to ${MAX_COUNT}`, 1, MAX_COUNT), 1),
    // A chosen key (importing licenses sold elsewhere): printable ASCII without spaces, so it can be typed back.
    key: v.optional(v.pipe(TypedKey, v.regex(/^[\x21-\x7e]+$/, 'expected printable ASCII characters without spaces'))),
  }),
  v.forward(v.check((b) => b.key === undefined || b.count === 1, 'a chosen key creates one license: count must be 1'), ['count']),
);
export type CreateLicenseInput = v.InferOutput<typeof CreateLicenseBody>;

export const ActivateBody = v.strictObject({
  key: TypedKey,
  activationIso: v.optional(v.pipe(
    v.string(),
    v.description('ISO 8601 date-time with a UTC offset (Z or ±hh:mm), from 1970 on; default: now'),
    v.maxLength(64, 'expected at most 64 characters'),
    v.transform(parseIsoWithOffset),
    v.number('expected an ISO 8601 date-time with a UTC offset, e.g. 2026-01-02T03:04:05.678+01:00'),
    v.minValue(Date.UTC(1970, 0, 1), 'expected a date-time from 1970 on'),
  )),
});

export const ClaimBody = v.strictObject({
  licenseKey: TypedKey,
  nodeId: v.pipe(v.string(), v.minLength(1, 'expected a non-empty nodeId'), v.maxLength(256, 'expected at most 256 characters')),
});

export const ControllerParams = v.strictObject({
  nodeId: v.pipe(v.string(), v.minLength(1, 'expected a non-empty nodeId'), v.maxLength(256, 'expected at most 256 characters')),
});

/** deactivationDate for an activation at `activation`; undefined when it would leave the four-digit years. */
export function deactivationOf(activation: number, durationDays: number): number | undefined {
  const end = activation + durationDays * DAY_MS;
  return end > MAX_TIME ? undefined : end;
}

// ---- responses ----

const Iso = v.pipe(v.string(), v.isoTimestamp());
const KwOut = v.nullable(v.number());

export const License = v.object({
  id: v.pipe(v.string(), v.uuid()),
  key: v.string(),
  gridKw: KwOut,
  solarKw: KwOut,
  batteryKw: KwOut,
  evKw: KwOut,
  creationDate: Iso,
  activationDate: v.nullable(Iso),
  duration: v.number(),
  deactivationDate: v.nullable(Iso),
  type: v.picklist(['residential', 'commercial']),
});
export type LicenseJson = v.InferOutput<typeof License>;

export const LicensesResponse = v.object({ licenses: v.array(License) });

const pageSize = v.pipe(v.number(), v.safeInteger('expected an integer from 1 to 1000'), v.minValue(1, 'expected an integer from 1 to 1000'), v.maxValue(1000, 'expected an integer from 1 to 1000'));
const pageOffset = v.pipe(v.number(), v.safeInteger('expected an integer >= 0'), v.minValue(0, 'expected an integer >= 0'));

/** POST /v1/license/query (ours): a missing body is {}. */
export const LicenseQueryBody = v.optional(v.strictObject({
  filter: v.optional(v.strictObject({
    claimed: v.optional(v.pipe(v.boolean(), v.description('true: linked to a controller; false: not linked'))),
    activated: v.optional(v.pipe(v.boolean(), v.description('true: activated; false: not activated yet'))),
  })),
  limit: v.optional(v.pipe(pageSize, v.description('page size, default 100'))),
  offset: v.optional(v.pipe(pageOffset, v.description('licenses to skip, default 0'))),
}));
export const LicenseListResponse = v.object({ licenses: v.array(License), total: v.number() });
export const ActivateResponse = v.object({ success: v.literal(true), license: License });
export const ClaimResponse = v.object({
  success: v.literal(true),
  license: v.object({ id: v.pipe(v.string(), v.uuid()), key: v.string(), nodeId: v.string() }),
});

export type LicenseRow = LicensesTable;

/** The public JSON of a license (docs/api.md#licenses): dates as ISO 8601 UTC with milliseconds, deactivationDate derived. */
export function toLicense(row: LicenseRow): LicenseJson {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    id: row.id,
    key: row.key,
    gridKw: row.grid_kw,
    solarKw: row.solar_kw,
    batteryKw: row.battery_kw,
    evKw: row.ev_kw,
    creationDate: iso(row.creation_date),
    activationDate: row.activation_date === null ? null : iso(row.activation_date),
    duration: row.duration,
    deactivationDate: row.activation_date === null ? null : iso(row.activation_date + row.duration * DAY_MS),
    type: row.type,
  };
}

/** The audit entry of a new license: every field but the key, which is a secret. */
export function licenseCreated(row: LicenseRow): AuditEvent {
  const { key: _key, id: _id, ...fields } = toLicense(row);
  return { action: 'license.create', target: { kind: 'license', id: row.id }, changes: created(fields) };
}
