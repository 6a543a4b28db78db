// Request and response schemas of /user/tokens.
import * as v from 'valibot';
import { pathInt } from '../http/validate.ts';
import { API_TOKEN_SCOPES } from './api-tokens.store.ts';

export const CreateApiTokenBody = v.strictObject({
  // no control characters: a name is shown in lists and logs (and SQLite's length() stops at a NUL)
  name: v.pipe(v.string(), v.minLength(1, 'expected 1..100 characters'), v.maxLength(100, 'expected 1..100 characters'),
    v.regex(/^[^\u0000-\u001f\u007f]*$/, 'expected no control characters')),
  scopes: v.pipe(
    v.array(v.picklist(API_TOKEN_SCOPES, `expected one of ${API_TOKEN_SCOPES.join(', ')}`)),
    v.minLength(1, 'expected at least 1 scope'),
    v.maxLength(API_TOKEN_SCOPES.length, `expected at most ${API_TOKEN_SCOPES.length} scopes`),
    v.check((s) => new Set(s).size === s.length, 'expected each scope at most once'),
  ),
  expiresInDays: v.optional(v.pipe(v.number(), v.safeInteger('expected an integer 1..3650'), v.minValue(1, 'expected an integer 1..3650'), v.maxValue(3650, 'expected an integer 1..3650'))),
});

export const ApiTokenIdParams = v.strictObject({ id: pathInt });

const Iso = v.pipe(v.string(), v.isoTimestamp());

export const ApiTokenSchema = v.object({
  id: v.number(),
  name: v.string(),
  scopes: v.array(v.picklist(API_TOKEN_SCOPES)),
  createdAt: Iso,
  expiresAt: v.nullable(Iso),
  lastUsedAt: v.nullable(Iso),
});

export const CreatedApiTokenSchema = v.object({ ...ApiTokenSchema.entries, token: v.string() });
export const ApiTokensResponse = v.object({ tokens: v.array(ApiTokenSchema) });
