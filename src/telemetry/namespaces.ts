// Namespace identity and the per-namespace figures of docs/api.md#namespaces: expected interval, shard duration, worst-case range.
// Shard windows are aligned to the Unix epoch, so the shard a point lands in is a pure function of (namespace, time).

export type Namespace =
  | { version: '1'; database: string; retentionPolicy: string }
  | { version: '2'; organization: string; bucket: string }
  | { version: 'IOx'; value: string };

/** The legacy `from: { database, retentionPolicy }` form, which equals version 1. */
export interface LegacyNamespace {
  database: string;
  retentionPolicy: string;
}

export interface NamespaceProfile {
  intervalSeconds: number;
  /** The same interval in ms, so cost maths stays in integers. */
  intervalMs: number;
  shardDurationMs: number;
  worstCaseRangeMs: number;
}

const DAY_MS = 86_400_000;

// Checked in order; the name is the retention policy, bucket or IOx value. "10 years" is 3650 days (docs/api.md#namespaces).
const PROFILES: ReadonlyArray<readonly [suffix: string, profile: NamespaceProfile]> = [
  ['_one_s', { intervalSeconds: 1, intervalMs: 1_000, shardDurationMs: DAY_MS, worstCaseRangeMs: 30 * DAY_MS }],
  ['_one_m', { intervalSeconds: 60, intervalMs: 60_000, shardDurationMs: 7 * DAY_MS, worstCaseRangeMs: 400 * DAY_MS }],
  ['_one_h', { intervalSeconds: 3600, intervalMs: 3_600_000, shardDurationMs: 90 * DAY_MS, worstCaseRangeMs: 3650 * DAY_MS }],
];
const DEFAULT_PROFILE: NamespaceProfile = { intervalSeconds: 10, intervalMs: 10_000, shardDurationMs: DAY_MS, worstCaseRangeMs: 30 * DAY_MS };

/**
 * The longest database, retention policy, organization, bucket or IOx name a write may create, in UTF-8 bytes: InfluxDB
 * keeps each as a directory name, which file systems bound to 255 bytes.
 */
export const MAX_NAME_BYTES = 255;

export function normalizeNamespace(ns: Namespace | LegacyNamespace): Namespace {
  if ('version' in ns) return ns;
  return { version: '1', database: ns.database, retentionPolicy: ns.retentionPolicy };
}

/**
 * A canonical string naming the namespace: `v1/<db>/<rp>`, `v2/<org>/<bucket>`, `iox/<value>`, each part
 * percent-encoded so a `/` inside a name cannot make two namespaces collide. Legacy input equals version 1.
 */
export function namespaceKey(ns: Namespace | LegacyNamespace): string {
  const n = normalizeNamespace(ns);
  const enc = encodeURIComponent;
  switch (n.version) {
    case '1': return `v1/${enc(n.database)}/${enc(n.retentionPolicy)}`;
    case '2': return `v2/${enc(n.organization)}/${enc(n.bucket)}`;
    case 'IOx': return `iox/${enc(n.value)}`;
  }
}

/** The name whose suffix picks the profile: retention policy, bucket or IOx value. */
export function namespaceName(ns: Namespace | LegacyNamespace): string {
  const n = normalizeNamespace(ns);
  switch (n.version) {
    case '1': return n.retentionPolicy;
    case '2': return n.bucket;
    case 'IOx': return n.value;
  }
}

export function namespaceProfile(ns: Namespace | LegacyNamespace): NamespaceProfile {
  const name = namespaceName(ns);
  for (const [suffix, profile] of PROFILES) if (name.endsWith(suffix)) return profile;
  return DEFAULT_PROFILE;
}

export interface WriteParams {
  db?: string;
  rp?: string;
  org?: string;
  bucket?: string;
  namespace?: string;
}

export type WriteNamespaceResult = { ok: true; namespace: Namespace } | { ok: false; message: string };

/**
 * The namespace a write targets, from its query parameters: `?db=[&rp=]` (rp defaults to `autogen`, like InfluxDB 1.x),
 * `?org=&bucket=` or `?namespace=`. Empty values count as absent; mixing the forms is refused rather than guessed.
 */
export function namespaceFromWriteParams(params: WriteParams): WriteNamespaceResult {
  const given = (s: string | undefined): s is string => s !== undefined && s !== '';
  const { db, rp, org, bucket, namespace } = params;
  const v1 = given(db) || given(rp);
  const v2 = given(org) || given(bucket);
  const iox = given(namespace);
  if (Number(v1) + Number(v2) + Number(iox) > 1) {
    return { ok: false, message: 'give one of db/rp, org/bucket or namespace, not several' };
  }
  if (iox) return { ok: true, namespace: { version: 'IOx', value: namespace } };
  if (v2) {
    if (!given(org) || !given(bucket)) return { ok: false, message: 'org and bucket must be given together' };
    return { ok: true, namespace: { version: '2', organization: org, bucket } };
  }
  if (v1) {
    if (!given(db)) return { ok: false, message: 'rp needs db' };
    return { ok: true, namespace: { version: '1', database: db, retentionPolicy: given(rp) ? rp : 'autogen' } };
  }
  return { ok: false, message: 'missing db (or org and bucket, or namespace)' };
}

/** Window k covers [k·d, (k+1)·d); floor division, so negative times fall in negative windows. */
export function shardWindow(timeMs: number, shardDurationMs: number): number {
  return floorDiv(timeMs, shardDurationMs);
}

/** Windows first..last (inclusive) overlapped by [fromMs, toMs); an empty range has count 0 and last = first - 1. */
export interface ShardSpan {
  first: number;
  last: number;
  count: number;
}

export function shardWindowsOverlapping(fromMs: number, toMs: number, shardDurationMs: number): ShardSpan {
  const first = shardWindow(fromMs, shardDurationMs);
  if (fromMs >= toMs) return { first, last: first - 1, count: 0 };
  const last = shardWindow(toMs - 1, shardDurationMs);
  return { first, last, count: last - first + 1 };
}

/** Every window of a span, for callers that open the shard tables one by one. */
export function listShardWindows(span: ShardSpan): number[] {
  const out: number[] = [];
  for (let k = span.first; k <= span.last; k++) out.push(k);
  return out;
}

/**
 * floor(a / b) for integers with b > 0. The remainder is exact for integers below 2^53, so unlike Math.floor(a / b)
 * the result cannot be off by one when the float quotient rounds up to the next integer.
 */
export function floorDiv(a: number, b: number): number {
  const r = a % b;
  const q = (a - r) / b;
  return r < 0 ? q - 1 : q;
}

/** ceil(a / b) for integers with b > 0, exact in the same way as floorDiv. */
export function ceilDiv(a: number, b: number): number {
  const r = a % b;
  const q = (a - r) / b;
  return r > 0 ? q + 1 : q;
}
