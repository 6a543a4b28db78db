// InfluxDB line protocol as plain objects (docs/api.md#telemetry-write): ParsedPoint per line, built on the one scanner in
// line-scanner.ts (which holds the grammar, the decisions, and the fast path the ingest uses directly).
import {
  BOOLEAN, FIELD_TYPES, FLOAT, INTEGER, LineScanner, STRING, UNSIGNED,
  type ParseOptions,
} from './line-scanner.ts';

export { LineProtocolError } from './line-scanner.ts';
export type { ParseOptions, Precision } from './line-scanner.ts';

export type FieldValue =
  | { type: 'float'; value: number }
  | { type: 'integer'; value: bigint }
  | { type: 'unsigned'; value: bigint }
  | { type: 'string'; value: string }
  | { type: 'boolean'; value: boolean };

export interface ParsedPoint {
  measurement: string;
  /** In line order (not sorted: the series key is the store's business); no inherited keys. Always holds `nodeId`. */
  tags: Record<string, string>;
  /** In line order, at least one; no inherited keys. */
  fields: Record<string, FieldValue>;
  /** floor(timestamp / 1 ms), also for negative timestamps. */
  timeMs: number;
  /** Nanoseconds past timeMs, 0..999_999 (always 0 for ms and s precision and for points without a timestamp). */
  subMsNs: number;
}

/** The exact timestamp of a point in nanoseconds. */
export function pointTimeNs(point: ParsedPoint): bigint {
  return BigInt(point.timeMs) * 1_000_000n + BigInt(point.subMsNs);
}

/**
 * Parses a whole request body (text, or pieces ending at line breaks: decodeUtf8Lines). Blank lines and `#` comments are skipped but counted; CRLF is accepted.
 * Throws LineProtocolError for the first malformed line (all-or-nothing, docs/api.md#telemetry-write).
 */
export function parseLineProtocol(body: string | readonly string[], opts: ParseOptions): ParsedPoint[] {
  const points: ParsedPoint[] = [];
  scanLineProtocol(body, opts, (point) => { points.push(point); });
  return points;
}

/**
 * The streaming form: hands each point to `onPoint` as soon as its line is parsed and returns the number of points.
 * A caller that stores points one by one (inside a transaction it rolls back on LineProtocolError, to keep the
 * request all-or-nothing) lets each point die young instead of holding the whole body's points at once.
 */
export function scanLineProtocol(body: string | readonly string[], opts: ParseOptions, onPoint: (point: ParsedPoint, line: number) => void): number {
  const scanner = new LineScanner(body, opts);
  let count = 0;
  while (scanner.nextLine()) {
    scanner.parseSeries();
    scanner.parseFields();
    onPoint(toPoint(scanner), scanner.line);
    count++;
  }
  return count;
}

/**
 * Records without inherited keys (`constructor`, `toString` and `__proto__` are plain tag names here) that, unlike
 * Object.create(null), keep V8's fast property layout: a million points share one hidden class per key order.
 */
const EmptyRecord = function EmptyRecord() {} as unknown as { new <T>(): Record<string, T>; prototype: object };
EmptyRecord.prototype = Object.create(null);

function toPoint(sc: LineScanner): ParsedPoint {
  const tags = new EmptyRecord<string>();
  for (let k = 0; k < sc.tagCount; k++) tags[sc.tagKeys[k]] = sc.tagValues[k];
  const fields = new EmptyRecord<FieldValue>();
  for (let k = 0; k < sc.fieldCount; k++) fields[sc.fieldKeys[k]] = fieldValue(sc, k);
  return { measurement: sc.measurement, tags, fields, timeMs: sc.timeMs, subMsNs: sc.subMsNs };
}

function fieldValue(sc: LineScanner, k: number): FieldValue {
  const n = sc.fieldNumbers[k];
  const v = sc.fieldValues[k];
  switch (sc.fieldKinds[k]) {
    case FLOAT: return { type: 'float', value: n };
    case INTEGER: return { type: 'integer', value: typeof v === 'bigint' ? v : BigInt(n) };
    case UNSIGNED: return { type: 'unsigned', value: typeof v === 'bigint' ? v : BigInt(n) };
    case STRING: return { type: 'string', value: v as string };
    case BOOLEAN: return { type: 'boolean', value: n === 1 };
    default: throw new Error(`unknown field kind ${FIELD_TYPES[sc.fieldKinds[k]]}`);
  }
}
