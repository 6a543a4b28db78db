// Request schemas of the telemetry endpoints (docs/api.md#telemetry-write, #telemetry-query). The same objects validate requests and feed the
// OpenAPI document; the calendar check on ISO strings is a `check` action, so convert with
// `toJsonSchema(schema, { ignoreActions: ['check'] })` — the regex still documents the accepted form.
import * as v from 'valibot';
import { qBool, qString } from '../http/validate.ts';
import { ISO_TIME_PATTERN, MAX_TIME_MS, MIN_TIME_MS, parseIsoTime } from './cost.ts';
import { MAX_NAME_BYTES } from './namespaces.ts';

const name = (what: string) => v.pipe(v.string(), v.minLength(1, `expected a non-empty ${what}`));

export const NamespaceSchema = v.variant('version', [
  v.strictObject({ version: v.literal('1'), database: name('database'), retentionPolicy: name('retention policy') }),
  v.strictObject({ version: v.literal('2'), organization: name('organization'), bucket: name('bucket') }),
  v.strictObject({ version: v.literal('IOx'), value: name('namespace value') }),
]);

export const SelectItemSchema = v.union([
  name('field name'),
  v.strictObject({ field: name('field name'), function: v.picklist(['sum', 'min', 'max', 'mean']) }),
], 'expected a field name or { field, function: sum|min|max|mean }');

export const FromSchema = v.union([
  v.strictObject({ measurement: name('measurement'), namespace: NamespaceSchema }),
  // Legacy form: equals { version: '1', database, retentionPolicy }.
  v.strictObject({ measurement: name('measurement'), database: name('database'), retentionPolicy: name('retention policy') }),
], 'expected { measurement, namespace: { version, ... } } or the legacy { measurement, database, retentionPolicy }');

const ISO_MESSAGE = 'expected an ISO 8601 time like 2026-01-02T03:04:05.678Z (years 0000-9999, a real date and time)';

export const TimeValueSchema = v.union([
  v.pipe(
    v.number(),
    v.integer('expected integer unix milliseconds'),
    v.minValue(MIN_TIME_MS, 'expected unix milliseconds within the years 0000-9999'),
    v.maxValue(MAX_TIME_MS, 'expected unix milliseconds within the years 0000-9999'),
  ),
  v.pipe(
    v.string(),
    v.regex(ISO_TIME_PATTERN, ISO_MESSAGE),
    v.check((s) => parseIsoTime(s) !== undefined, ISO_MESSAGE),
  ),
], 'expected unix milliseconds or an ISO 8601 string');

export const TimeConditionSchema = v.strictObject({
  operator: v.picklist(['<', '<=', '>', '>=', '=']),
  value: TimeValueSchema,
});

export const WhereSchema = v.strictObject({
  time: v.optional(v.pipe(v.array(TimeConditionSchema), v.maxLength(2, 'expected at most 2 time conditions'))),
  // Free-form (docs/api.md#bodies), but a tag value is always a string.
  tags: v.optional(v.record(v.string(), v.string())),
});

export const QuerySchema = v.strictObject({
  select: v.pipe(
    v.array(SelectItemSchema),
    v.minLength(1, 'expected at least 1 item'),
    v.maxLength(100, 'expected at most 100 items'),
  ),
  from: FromSchema,
  where: v.optional(WhereSchema),
  orderBy: v.optional(v.picklist(['ASC', 'DESC'])),
  limit: v.optional(v.pipe(v.number(), v.safeInteger('expected an integer >= 1'), v.minValue(1, 'expected an integer >= 1'))),
});

/** One query, or an array of 1..1000 (the response mirrors the shape). */
export const QueryBodySchema = v.union([
  QuerySchema,
  v.pipe(v.array(QuerySchema), v.minLength(1, 'expected at least 1 query'), v.maxLength(1000, 'expected at most 1000 queries')),
]);

export type NamespaceInput = v.InferOutput<typeof NamespaceSchema>;
export type SelectItem = v.InferOutput<typeof SelectItemSchema>;
export type From = v.InferOutput<typeof FromSchema>;
export type TimeConditionInput = v.InferOutput<typeof TimeConditionSchema>;
export type Where = v.InferOutput<typeof WhereSchema>;
export type Query = v.InferOutput<typeof QuerySchema>;
export type QueryBody = v.InferOutput<typeof QueryBodySchema>;

// Query-string values arrive as a string, or a string[] when repeated; the last one counts (as in InfluxDB).
const param = v.optional(v.pipe(
  v.union([v.string(), v.array(v.string())]),
  v.transform((x) => (Array.isArray(x) ? x[x.length - 1] : x)),
));

/** A namespace name as written: at most MAX_NAME_BYTES bytes (docs/api.md#telemetry-limits). */
const nameParam = v.optional(v.pipe(
  v.union([v.string(), v.array(v.string())]),
  v.transform((x) => (Array.isArray(x) ? x[x.length - 1] : x)),
  v.maxBytes(MAX_NAME_BYTES, `expected at most ${MAX_NAME_BYTES} bytes`),
));

/**
 * Query parameters of `POST /v1/telemetry` (the write endpoint). InfluxDB clients also send parameters we do not use
 * (`u`, `p` credentials, `consistency`, v2's `orgID`): they are accepted and ignored. Anything else is a typo → 400.
 * Which namespace the parameters name is decided by namespaceFromWriteParams().
 */
export const WriteParamsSchema = v.pipe(
  v.strictObject({
    db: nameParam,
    rp: nameParam,
    org: nameParam,
    bucket: nameParam,
    namespace: nameParam,
    precision: v.optional(v.pipe(
      v.union([v.string(), v.array(v.string())]),
      v.transform((x) => (Array.isArray(x) ? x[x.length - 1] : x)),
      v.picklist(['ns', 'us', 'ms', 's'], 'expected ns, us, ms or s'),
    ), 'ns'),
    u: param,
    p: param,
    consistency: param,
    orgID: param,
  }),
  v.transform(({ db, rp, org, bucket, namespace, precision }) => ({ db, rp, org, bucket, namespace, precision })),
);

export type WriteQueryParams = v.InferOutput<typeof WriteParamsSchema>;

/**
 * Query parameters of `POST /v1/telemetry/query`. `apiTier` and `dryRun` belong to the cost limiter (docs/api.md#rate-limit),
 * which owns their meaning; they are declared here so the route accepts them.
 */
export const QueryParamsSchema = v.strictObject({
  apiTier: v.optional(v.pipe(qString, v.picklist(['free', 'basic', 'premium'], 'expected free, basic or premium'))),
  dryRun: v.optional(qBool),
});

const CellSchema = v.union([v.number(), v.string(), v.boolean(), v.null()]);

export const StatementResultSchema = v.object({
  statement_id: v.number(),
  series: v.optional(v.array(v.object({
    name: v.string(),
    tags: v.record(v.string(), v.string()),
    columns: v.array(v.string()),
    values: v.array(v.array(CellSchema)),
  }))),
  error: v.optional(v.string()),
});

export const QueryResponseSchema = v.union([StatementResultSchema, v.array(StatementResultSchema)]);

export const NamespacesResponseSchema = v.object({
  namespaces: v.array(v.object({
    namespace: NamespaceSchema,
    expectedIntervalSeconds: v.number(),
    shardDurationSeconds: v.number(),
    worstCaseRangeSeconds: v.number(),
    shards: v.number(),
    oldestShardStart: v.nullable(v.string()),
    createdAt: v.string(),
  })),
});
