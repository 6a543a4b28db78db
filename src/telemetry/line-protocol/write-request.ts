// A telemetry write request (POST /v1/telemetry, POST /write) as both storage backends take it, and the rules of its
// lines that both writers check, worded once.
import { FIELD_TYPES, INT64_MAX, LineProtocolError, type FieldKind, type LineScanner } from './line-scanner.ts';
import type { Namespace } from '../namespaces.ts';
import type { Precision } from './line-scanner.ts';

export interface WriteRequest {
  userId: number;
  namespace: Namespace;
  /** the line-protocol text in pieces that each end at a line break (decodeUtf8Lines) */
  body: readonly string[];
  precision: Precision;
  now: number;
  /** points older than this (unix ms) are beyond retention: accepted but not stored */
  retainFromMs?: number;
  /** told of each line the SQLite writer stores (the alarm evaluator takes the points from there instead of scanning again) */
  observe?: LineObserver;
}

/**
 * Told of the lines a write stores as the writer scans them: `begin` before each scan of the body (a body may be
 * scanned twice: only the last scan counts), `line` with the scanner on the stored line's fields and time.
 */
export interface LineObserver {
  begin(): void;
  line(measurement: string, nodeId: string, sc: LineScanner): void;
}

/**
 * U+0000 is refused in a body (PostgreSQL text cannot hold it, and no measurement, tag or string field needs it): the
 * number of the first line holding one (comment lines aside: they are not stored), -1 when there is none. The scanners
 * refuse that line when they reach it, so an earlier malformed line is still the one reported.
 */
export function nulLine(body: readonly string[]): number {
  if (!body.some((piece) => piece.includes('\u0000'))) return -1;
  // lines before the current piece (each piece ends with a line break, the last one aside)
  let before = 0;
  for (const piece of body) {
    let line = 1;
    let lineStart = 0;
    for (let at = piece.indexOf('\u0000'); at >= 0; at = piece.indexOf('\u0000', at + 1)) {
      for (let nl = piece.indexOf('\n', lineStart); nl >= 0 && nl < at; nl = piece.indexOf('\n', lineStart)) {
        line++;
        lineStart = nl + 1;
      }
      if (!/^[ \t]*#/.test(piece.slice(lineStart, at))) return before + line;
    }
    for (let nl = piece.indexOf('\n', lineStart); nl >= 0; nl = piece.indexOf('\n', nl + 1)) line++;
    before += line - 1;
  }
  return -1;
}

export const NUL_REASON = 'the NUL character (U+0000) is not allowed';

/**
 * Fields of one measurement at most, on every backend (docs/api.md#telemetry-limits): the most a PostgreSQL shard table
 * holds (1,600 columns, three per field number beside the key). SQLite could hold 1,997; it keeps to the same limit so
 * that both accept exactly the same writes.
 */
export const MAX_FIELDS_PER_MEASUREMENT = 532;

/** A field keeps its first type (InfluxDB's rule). */
export function typeConflict(line: number, field: string, measurement: string, stored: FieldKind, got: FieldKind): LineProtocolError {
  return new LineProtocolError(line, `field type conflict: "${field}" of measurement "${measurement}" is ${FIELD_TYPES[stored]}, got ${FIELD_TYPES[got]}`);
}

/** Whether a measurement that has `count` fields may gain field `name` (at most `max`). Throws LineProtocolError. */
export function checkNewField(line: number, name: string, measurement: string, count: number, max = MAX_FIELDS_PER_MEASUREMENT): void {
  // A field called time would be indistinguishable from the time column of every answer (InfluxDB refuses it too).
  if (name === 'time') throw new LineProtocolError(line, 'the field name "time" is reserved for the time column');
  if (count >= max) throw new LineProtocolError(line, `measurement "${measurement}" would have more than ${max} fields`);
}

/**
 * An unsigned value beyond 15 digits as stored: both stores keep integers as int64, so larger unsigned values are
 * refused rather than stored inexactly (InfluxDB 1.x refuses unsigned integers altogether).
 */
export function storedUnsigned(sc: LineScanner, k: number, big: bigint): bigint {
  if (big > INT64_MAX) throw new LineProtocolError(sc.line, `unsigned value of field "${sc.fieldKeys[k]}" is above ${INT64_MAX}, the largest this store keeps`);
  return big;
}
