// Ed25519 signing keys, stored in the database so tokens survive restarts. The newest non-retired key signs;
// every stored key verifies (a retired key keeps verifying the tokens it signed until they expire).
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/open.ts';

export interface KeyRing {
  kid: string;
  privateKey: CryptoKey;
  publicKeys: Map<string, CryptoKey>;
}

/** Creates the first signing key when the database has none. Returns true when it created one. */
export async function ensureSigningKey(db: Db, now: number): Promise<boolean> {
  const existing = await db.get(db.qb.selectFrom('signing_keys').select('kid').where('retired_at', 'is', null).limit(1));
  if (existing) return false;
  await rotateSigningKey(db, now);
  return true;
}

/** Adds a new signing key and retires the old ones (they still verify). */
export async function rotateSigningKey(db: Db, now: number): Promise<string> {
  const { privateKey, publicKey } = await generateKeyPair('Ed25519', { extractable: true });
  const kid = randomBytes(9).toString('base64url');
  const privateJwk = JSON.stringify(await exportJWK(privateKey));
  const publicJwk = JSON.stringify(await exportJWK(publicKey));
  await db.tx(async (tx) => {
    await tx.run(tx.qb.updateTable('signing_keys').set({ retired_at: now }).where('retired_at', 'is', null));
    await tx.run(tx.qb.insertInto('signing_keys').values({ kid, private_jwk: privateJwk, public_jwk: publicJwk, created_at: now, retired_at: null }));
  });
  return kid;
}

export async function loadKeyRing(db: Db): Promise<KeyRing> {
  const rows = await db.all(db.qb.selectFrom('signing_keys').selectAll().orderBy('created_at', 'desc').orderBy('kid'));
  const active = rows.find((r) => r.retired_at === null);
  if (!active) throw new Error('no signing key: run migrations and bootstrap first');
  const publicKeys = new Map<string, CryptoKey>();
  for (const row of rows) {
    publicKeys.set(row.kid, (await importJWK(JSON.parse(row.public_jwk) as JWK, 'EdDSA')) as CryptoKey);
  }
  const privateKey = (await importJWK(JSON.parse(active.private_jwk) as JWK, 'EdDSA')) as CryptoKey;
  return { kid: active.kid, privateKey, publicKeys };
}
