// Revocation of tokens (logout, password change). Filled in by the authentication work.
import type { Db } from '../db/open.ts';
import type { SessionGuard } from '../deps.ts';

export function createSessionGuard(_db: Db): SessionGuard {
  return { isRevoked: () => false };
}
