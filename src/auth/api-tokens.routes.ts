// /user/tokens: the caller's long-lived API tokens. Managed with a session token only (never with an API
// token); creating one needs a sudo token when the user has 2FA on, so a stolen access token cannot mint a credential
// that outlives it by years.
import type { RouteContext } from '../context/route-context.ts';
import { ApiError } from '../http/errors.ts';
import { isTwoFactorEnabled } from './two-factor.store.ts';
import {
  countApiTokens, deleteApiToken, hashApiToken, insertApiToken, listApiTokens, MAX_TOKENS_PER_USER, newApiTokenSecret,
  type ApiTokenRow,
} from './api-tokens.store.ts';
import { ApiTokenIdParams, ApiTokensResponse, CreateApiTokenBody, CreatedApiTokenSchema } from './api-tokens.schemas.ts';
import { created, recordAudit } from '../audit/record.ts';

const DAY_MS = 86_400_000;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Public JSON of a token: never its secret or hash. */
function toApiToken(row: ApiTokenRow) {
  return {
    id: row.id, name: row.name, scopes: row.scopes, createdAt: iso(row.created_at)!, expiresAt: iso(row.expires_at), lastUsedAt: iso(row.last_used_at),
  };
}

export function registerApiTokenRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;

  api.route({
    method: 'post', path: '/user/tokens', tag: 'authentication', summary: 'Create a long-lived API token',
    description: 'Scopes: api (wherever an access token is accepted, except token, password and 2FA operations), '
      + 'telemetry:write (telemetry writes, also POST /write), telemetry:read (telemetry queries, also /query). '
      + `The secret (gk_...) is in this answer only; at most ${MAX_TOKENS_PER_USER} tokens per user. `
      + 'With 2FA enabled this needs a sudo token.',
    auth: auth.requireSession, body: CreateApiTokenBody,
    responses: {
      201: { description: 'the token, with its secret (shown once)', schema: CreatedApiTokenSchema },
      409: { description: `TOO_MANY_TOKENS: the user already has ${MAX_TOKENS_PER_USER} tokens` },
    },
  }, async (c, { body }) => {
    const actor = c.var.actor;
    if (actor.tokenType !== 'sudo' && await isTwoFactorEnabled(db, actor.userId)) {
      throw new ApiError('SUDO_REQUIRED', '2FA is enabled: creating an API token needs a sudo token');
    }
    const token = newApiTokenSecret();
    const now = deps.now();
    const row = await db.write(async (tx) => {
      if (await countApiTokens(tx, actor.userId) >= MAX_TOKENS_PER_USER) {
        throw new ApiError('TOO_MANY_TOKENS', `at most ${MAX_TOKENS_PER_USER} API tokens per user: delete one first`);
      }
      const inserted = await insertApiToken(tx, {
        userId: actor.userId, name: body.name, scopes: body.scopes, hash: hashApiToken(token), now,
        expiresAt: body.expiresInDays === undefined ? null : now + body.expiresInDays * DAY_MS,
      });
      await recordAudit(tx, c, deps, {
        action: 'user.token.create', target: { kind: 'api-token', id: inserted.id }, userId: actor.userId,
        changes: created({ name: inserted.name, scopes: inserted.scopes, expiresAt: inserted.expires_at === null ? null : new Date(inserted.expires_at).toISOString() }),
      });
      return inserted;
    });
    return c.json({ ...toApiToken(row), token }, 201);
  });

  api.route({
    method: 'get', path: '/user/tokens', tag: 'authentication', summary: 'List the caller\'s API tokens (without secrets)',
    description: `lastUsedAt is recorded with a resolution of one minute.`,
    auth: auth.requireSession,
    responses: { 200: { description: 'the tokens, oldest first', schema: ApiTokensResponse } },
  }, async (c) => c.json({ tokens: (await listApiTokens(db, c.var.actor.userId)).map(toApiToken) }));

  api.route({
    method: 'delete', path: '/user/tokens/:id', tag: 'authentication', summary: 'Delete an API token',
    description: 'The token is refused from the next request on. Another user\'s token is a 404.',
    auth: auth.requireSession, params: ApiTokenIdParams,
    responses: { 204: { description: 'deleted' } },
  }, async (c, { params }) => {
    const deleted = await db.write(async (tx) => {
      const gone = await deleteApiToken(tx, c.var.actor.userId, params.id);
      if (gone) await recordAudit(tx, c, deps, { action: 'user.token.delete', target: { kind: 'api-token', id: params.id }, userId: c.var.actor.userId, changes: { token: { after: 'revoked' } } });
      return gone;
    });
    if (!deleted) throw new ApiError('NOT_FOUND', `no API token ${params.id}`);
    return c.body(null, 204);
  });
}
