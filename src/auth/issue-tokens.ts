// Minting the tokens a caller walks away with. A refresh token opens a session (its sid); access and sudo tokens
// minted from it carry that sid, so revoking the session revokes them too.
import type { Deps } from '../context/deps.ts';
import { openSession, type InUnit } from './sessions.ts';
import { signToken } from './tokens.ts';
import { tokenGeneration } from './users.store.ts';

// The generation is read before signing: a password change committed in between makes the token void, never the
// other way round.
export async function issueRefreshToken(deps: Deps, userId: number, inUnit?: InUnit): Promise<string> {
  const now = deps.now();
  const gen = await tokenGeneration(deps.db, userId);
  const sid = await openSession(deps.db, userId, now, inUnit);
  return (await signToken(deps.keys, { typ: 'refresh', sub: userId, sid, gen }, now)).token;
}

export async function issueToken(deps: Deps, typ: 'access' | 'sudo' | 'partial', userId: number, sid?: string): Promise<string> {
  const gen = await tokenGeneration(deps.db, userId);
  return (await signToken(deps.keys, { typ, sub: userId, gen, ...(sid ? { sid } : {}) }, deps.now())).token;
}

/** The end of a two-factor login: a new session and all three kinds of token from it. */
export async function issueLoginTokens(deps: Deps, userId: number, inUnit?: InUnit): Promise<{ accessToken: string; refreshToken: string; sudoToken: string }> {
  const now = deps.now();
  const gen = await tokenGeneration(deps.db, userId);
  const sid = await openSession(deps.db, userId, now, inUnit);
  const [refresh, access, sudo] = await Promise.all([
    signToken(deps.keys, { typ: 'refresh', sub: userId, sid, gen }, now),
    signToken(deps.keys, { typ: 'access', sub: userId, sid, gen }, now),
    signToken(deps.keys, { typ: 'sudo', sub: userId, sid, gen }, now),
  ]);
  return { accessToken: access.token, refreshToken: refresh.token, sudoToken: sudo.token };
}
