// JWTs: EdDSA (Ed25519), `kid` header, payload `typ` (refresh | access | partial | sudo), `sub` = user id.
// A token is accepted only where its typ is expected; the caller names the accepted kinds.
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { randomBytes } from 'node:crypto';
import { ApiError } from '../http/errors.ts';
import type { TokenClaims, TokenType } from '../http/env.ts';
import type { SigningKeys } from '../context/deps.ts';
import { LruCache } from '../lib/lru-cache.ts';
import { DatabaseUnavailable } from '../db/unavailable.ts';

/** Lifetimes in seconds (docs/api.md#tokens). */
export const TOKEN_LIFETIME: Record<TokenType, number> = {
  refresh: 14 * 24 * 3600,
  access: 10 * 60,
  partial: 5 * 60,
  sudo: 5 * 60,
};

export async function signToken(
  keys: SigningKeys,
  claims: { typ: TokenType; sub: number; sid?: string; jti?: string; gen?: number },
  nowMs: number,
): Promise<{ token: string; claims: TokenClaims }> {
  const iat = Math.floor(nowMs / 1000);
  const full: TokenClaims = {
    typ: claims.typ,
    sub: claims.sub,
    jti: claims.jti ?? randomBytes(12).toString('base64url'),
    ...(claims.sid ? { sid: claims.sid } : {}),
    gen: claims.gen ?? 0,
    iat,
    exp: iat + TOKEN_LIFETIME[claims.typ],
  };
  const { kid, privateKey } = await keys.signer(nowMs);
  const token = await new SignJWT({ ...full, sub: String(full.sub) })
    .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'JWT' })
    .sign(privateKey);
  return { token, claims: full };
}

const unauthenticated = (message: string) => new ApiError('UNAUTHENTICATED', message);

/**
 * Verified tokens, keyed by the exact token string, per key ring: an Ed25519 verification costs far more CPU than
 * the map lookup of a hit. Only tokens whose signature and claims checked out are stored, expiry is checked
 * again on every hit, and revocation is not cached at all (the session guard runs on every request). Bounded: the
 * least recently used entry goes first.
 */
const CACHE_SIZE = 4096;
const verified = new WeakMap<SigningKeys, LruCache<string, TokenClaims>>();

function cacheFor(keys: SigningKeys): LruCache<string, TokenClaims> {
  let cache = verified.get(keys);
  if (!cache) verified.set(keys, (cache = new LruCache(CACHE_SIZE)));
  return cache;
}

/** Verifies signature, expiry and kind. Every failure is a 401 that does not say more than needed. */
export async function verifyToken(keys: SigningKeys, token: string, accepted: readonly TokenType[], nowMs: number): Promise<TokenClaims> {
  const cache = cacheFor(keys);
  let claims = cache.get(token);
  if (claims) {
    // same rule as jose: expired when exp <= now (whole seconds)
    if (claims.exp <= Math.floor(nowMs / 1000)) {
      cache.delete(token);
      throw unauthenticated('token expired');
    }
  } else {
    claims = await verifySignedToken(keys, token, nowMs);
    cache.set(token, claims);
  }
  if (!accepted.includes(claims.typ)) throw unauthenticated(`a ${claims.typ} token is not accepted here (expected ${accepted.join(' or ')})`);
  return claims;
}

async function verifySignedToken(keys: SigningKeys, token: string, nowMs: number): Promise<TokenClaims> {
  let payload: Record<string, unknown>;
  try {
    const result = await jwtVerify(token, async (header) => {
      const key = header.kid ? await keys.publicKey(header.kid) : undefined;
      if (!key) throw new joseErrors.JWKSNoMatchingKey();
      return key;
    }, { algorithms: ['EdDSA', 'Ed25519'], currentDate: new Date(nowMs) });
    payload = result.payload as Record<string, unknown>;
  } catch (err) {
    if (err instanceof DatabaseUnavailable) throw err; // looking up a key this node had not loaded: not the token's fault
    if (err instanceof joseErrors.JWTExpired) throw unauthenticated('token expired');
    throw unauthenticated('invalid token');
  }
  const typ = payload.typ as TokenType;
  const sub = Number(payload.sub);
  if (!['refresh', 'access', 'partial', 'sudo'].includes(typ) || !Number.isSafeInteger(sub) || typeof payload.jti !== 'string'
    || typeof payload.iat !== 'number' || typeof payload.exp !== 'number' || (payload.gen !== undefined && !Number.isSafeInteger(payload.gen))) {
    throw unauthenticated('invalid token');
  }
  // frozen: the same object is handed out again on cache hits
  return Object.freeze({
    typ, sub, jti: payload.jti, iat: payload.iat, exp: payload.exp, gen: (payload.gen as number | undefined) ?? 0,
    ...(typeof payload.sid === 'string' ? { sid: payload.sid } : {}),
  });
}

/**
 * The token of an `Authorization: Bearer <token>` header, or undefined. `Token <token>` (InfluxDB's scheme) is taken
 * too, for API tokens only: `allowTokenScheme`.
 */
export function bearerToken(header: string | undefined, allowTokenScheme = false): string | undefined {
  if (!header) return undefined;
  const m = /^(Bearer|Token)[ ]+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(header);
  if (!m) return undefined;
  if (m[1].toLowerCase() === 'token' && !allowTokenScheme) return undefined;
  return m[2];
}
