// The cost of a telemetry query request, exactly as docs/api.md#cost states it. The client scripts src/assets/estimateCost.{ts,py}
// duplicate this on purpose (they are handed out standalone); test/telemetry/estimators.test.ts proves all three agree.
//
// All arithmetic is on integers below 2^53, so plain numbers are exact: time values are limited to the years
// 0000–9999 (|t| < 2.6e14 ms, the span an ISO string can name), ranges and window products stay below 2^49,
// and the datapoint sum of 1000 queries stays below 1000 · 3.2e11 ≈ 2^48.
import { ceilDiv, namespaceProfile, shardWindowsOverlapping } from './namespaces.ts';
import type { LegacyNamespace, Namespace } from './namespaces.ts';

export type TimeOperator = '<' | '<=' | '>' | '>=' | '=';

export interface TimeCondition {
  operator: TimeOperator;
  /** Unix ms, or an ISO 8601 string (see ISO_TIME_PATTERN). */
  value: number | string;
}

/** The parts of a query (docs/api.md#telemetry-query) that its cost depends on. */
export interface CostQuery {
  from: { namespace: Namespace } | LegacyNamespace;
  where?: { time?: readonly TimeCondition[] };
  limit?: number;
}

export interface QueryEstimate {
  estimatedDatapoints: number;
  scannedShards: number;
}

export interface RequestEstimate extends QueryEstimate {
  cost: number;
}

/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the time values a query may name. */
export const MIN_TIME_MS = -62_167_219_200_000;
export const MAX_TIME_MS = 253_402_300_799_999;

/**
 * The ISO 8601 forms accepted (ours, identical in the client scripts): `YYYY-MM-DD` (midnight UTC) or
 * `YYYY-MM-DDTHH:MM[:SS[.fraction]]` with `Z`, `±HH:MM` or no offset (= UTC, never the server's local time).
 * Fractions beyond milliseconds are truncated.
 */
export const ISO_TIME_PATTERN =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$/;

/** Unix ms of an ISO string in the accepted form, or undefined when it is not one or names no real instant. */
export function parseIsoTime(text: string): number | undefined {
  const m = ISO_TIME_PATTERN.exec(text);
  if (m === null) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const hour = Number(m[4] ?? 0);
  const minute = Number(m[5] ?? 0);
  const second = Number(m[6] ?? 0);
  const millis = Number((m[7] ?? '').slice(0, 3).padEnd(3, '0'));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone !== undefined && zone !== 'Z') {
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const ms = (((daysFromCivil(year, month, day) * 24 + hour) * 60 + minute - offsetMinutes) * 60 + second) * 1000 + millis;
  return ms < MIN_TIME_MS || ms > MAX_TIME_MS ? undefined : ms;
}

/** Unix ms of a `where.time` value; a value outside the accepted forms is a programming error (the schema refuses it). */
export function timeValueMs(value: number | string): number {
  const ms = typeof value === 'number' ? value : parseIsoTime(value);
  if (ms === undefined || !Number.isInteger(ms) || ms < MIN_TIME_MS || ms > MAX_TIME_MS) {
    throw new RangeError(`not a valid time value: ${JSON.stringify(value)}`);
  }
  return ms;
}

/**
 * The half-open range [fromMs, toMs) a query reads. Conditions intersect; `to` defaults to now; a missing lower bound
 * is the namespace's worst-case range ending at `to`. The range may be empty (fromMs >= toMs).
 */
export function queryRange(query: CostQuery, nowMs: number): { fromMs: number; toMs: number } {
  let from: number | undefined;
  let to: number | undefined;
  const raiseFrom = (v: number) => { from = from === undefined ? v : Math.max(from, v); };
  const lowerTo = (v: number) => { to = to === undefined ? v : Math.min(to, v); };
  for (const { operator, value } of query.where?.time ?? []) {
    const v = timeValueMs(value);
    switch (operator) {
      case '>=': raiseFrom(v); break;
      case '>': raiseFrom(v + 1); break;
      case '<': lowerTo(v); break;
      case '<=': lowerTo(v + 1); break;
      case '=': raiseFrom(v); lowerTo(v + 1); break;
    }
  }
  const toMs = to ?? nowMs;
  const fromMs = from ?? toMs - queryProfile(query).worstCaseRangeMs;
  return { fromMs, toMs };
}

/** Whether the query names a lower time bound (docs/api.md#telemetry-query: without one, reads cover all stored data). */
export function hasLowerBound(query: CostQuery): boolean {
  return (query.where?.time ?? []).some((c) => c.operator === '>=' || c.operator === '>' || c.operator === '=');
}

export function estimateQuery(query: CostQuery, nowMs: number): QueryEstimate {
  const { fromMs, toMs } = queryRange(query, nowMs);
  if (fromMs >= toMs) return { estimatedDatapoints: 0, scannedShards: 0 };
  const profile = queryProfile(query);
  const expected = ceilDiv(toMs - fromMs, profile.intervalMs);
  return {
    estimatedDatapoints: query.limit === undefined ? expected : Math.min(query.limit, expected),
    scannedShards: shardWindowsOverlapping(fromMs, toMs, profile.shardDurationMs).count,
  };
}

/** Cost of one HTTP request carrying one query or an array of them, in integer hundredths rounded up. */
export function estimateRequest(body: CostQuery | readonly CostQuery[], nowMs: number): RequestEstimate {
  const queries: readonly CostQuery[] = Array.isArray(body) ? body : [body as CostQuery];
  let estimatedDatapoints = 0;
  let scannedShards = 0;
  for (const query of queries) {
    const e = estimateQuery(query, nowMs);
    estimatedDatapoints += e.estimatedDatapoints;
    scannedShards += e.scannedShards;
  }
  const hundredths = 100 * 1 + 50 * queries.length + estimatedDatapoints + 200 * scannedShards;
  return { cost: ceilDiv(hundredths, 100), estimatedDatapoints, scannedShards };
}

function queryProfile(query: CostQuery) {
  return namespaceProfile('namespace' in query.from ? query.from.namespace : query.from);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm; Date.UTC maps years 0–99 to 19xx). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}
