// The OpenAPI 3.1 document, generated from the same route declarations (and valibot schemas) that validate requests.
import * as v from 'valibot';
import { toJsonSchema, type JsonSchema } from '@valibot/to-json-schema';
import type { AnyRouteSpec } from './route.ts';
import { errorBody } from './errors.ts';

function schemaOf(schema: v.GenericSchema, typeMode: 'input' | 'output'): JsonSchema {
  const out = toJsonSchema(schema, { target: 'draft-2020-12', errorMode: 'ignore', typeMode }) as Record<string, unknown>;
  delete out.$schema;
  return out as JsonSchema;
}

/** Top-level entries of an object schema (query and path parameters). */
function entriesOf(schema: v.GenericSchema | undefined): [string, v.GenericSchema][] {
  const s = schema as unknown as { entries?: Record<string, v.GenericSchema> } | undefined;
  return s?.entries ? Object.entries(s.entries) : [];
}

function isOptional(schema: v.GenericSchema): boolean {
  return schema.type === 'optional' || schema.type === 'nullish' || schema.type === 'exact_optional';
}

const ERROR_SCHEMA = {
  type: 'object',
  required: ['statusCode', 'error', 'message', 'code'],
  properties: {
    statusCode: { type: 'integer' }, error: { type: 'string' }, message: { type: 'string' }, code: { type: 'string' },
  },
  example: errorBody(400, 'BAD_REQUEST', 'filter.id[2]: expected integer >= 0'),
};

export function buildOpenApi(specs: readonly AnyRouteSpec[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) {
    const path = spec.path.replace(/:(\w+)/g, '{$1}');
    const parameters = [
      ...entriesOf(spec.params).map(([name, s]) => ({ name, in: 'path', required: true, schema: schemaOf(s, 'input') })),
      ...entriesOf(spec.query).map(([name, s]) => ({ name, in: 'query', required: !isOptional(s), schema: schemaOf(s, 'input') })),
    ];
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(spec.responses)) {
      const type = r.contentType ?? 'application/json';
      responses[status] = {
        description: r.description,
        ...(r.schema ? { content: { [type]: { schema: schemaOf(r.schema, 'output') } } }
          : r.contentType ? { content: { [type]: { schema: { type: 'string' } } } } : {}),
      };
    }
    responses.default = { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    const requestBody = spec.body
      ? { required: !isOptional(spec.body), content: { 'application/json': { schema: schemaOf(spec.body, 'input') } } }
      : spec.rawBody
        ? { required: true, description: spec.rawBody.description, content: Object.fromEntries(spec.rawBody.contentTypes.map((t) => [t, { schema: { type: 'string' } }])) }
        : undefined;
    paths[path] ??= {};
    paths[path][spec.method] = {
      operationId: `${spec.method}${path.replace(/[{}]/g, '').replace(/(^|[/_-])(\w)/g, (_m, _s, ch: string) => ch.toUpperCase()).replace(/\W/g, '')}`,
      summary: spec.summary,
      ...(spec.description ? { description: spec.description } : {}),
      tags: [spec.tag],
      ...(spec.deprecated ? { deprecated: true } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses,
      security: spec.auth ? [spec.auth.security, ...(spec.auth.alsoAccepts ?? [])].map((s) => ({ [s]: [] })) : [],
    };
  }
  const bearer = (description: string) => ({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description });
  return {
    openapi: '3.1.0',
    info: {
      title: 'gridkeeper',
      version,
      description: 'Device, role and license management for energy installations. Wire-compatible with the Eniris Insights API.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: ERROR_SCHEMA },
      securitySchemes: {
        accessBearerAuth: bearer('Access token (10 minutes) from GET /auth/accesstoken; a sudo token is accepted too'),
        refreshBearerAuth: bearer('Refresh token (14 days) from POST /auth/login'),
        partialBearerAuth: bearer('Partial auth token (5 minutes) from a login that needs the second factor'),
        sudoBearerAuth: bearer('Sudo token (5 minutes) from the TOTP or recovery-code step'),
        apiTokenAuth: bearer('API token (gk_..., long-lived) from POST /user/tokens; `Authorization: Token gk_...` works too. '
          + 'Scope api: wherever an access token is, except token, password and 2FA operations; telemetry:write / telemetry:read: telemetry writes / queries'),
      },
    },
  };
}
