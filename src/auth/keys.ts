// Ed25519 signing keys, stored in the database so tokens survive restarts. The newest non-retired key signs;
// every stored key verifies (a retired key keeps verifying the tokens it signed until they expire).
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/open.ts';
import { activeKeyId, allSigningKeys, findSigningKey, replaceActiveKey } from './keys.store.ts';

/** Creates the first signing key when the database has none. Returns true when it created one. */
export async function ensureSigningKey(db: Db, now: number): Promise<boolean> {
  if (await activeKeyId(db) !== undefined) return false;
  await rotateSigningKey(db, now);
  return true;
}

/** Adds a new signing key and retires the old ones (they still verify). */
export async function rotateSigningKey(db: Db, now: number): Promise<string> {
  const { privateKey, publicKey } = await generateKeyPair('Ed25519', { extractable: true });
  const kid = randomBytes(9).toString('base64url');
  const privateJwk = JSON.stringify(await exportJWK(privateKey));
  const publicJwk = JSON.stringify(await exportJWK(publicKey));
  await replaceActiveKey(db, { kid, private_jwk: privateJwk, public_jwk: publicJwk, created_at: now }, now);
  return kid;
}

/** How long a node signs with the key it knows before it asks the database for a newer one (`keys rotate`). */
export const KEY_CHECK_MS = 5_000;

const importPublic = async (jwk: string) => (await importJWK(JSON.parse(jwk) as JWK, 'EdDSA')) as CryptoKey;

/**
 * The signing keys as one node knows them. Several nodes (or a `gridkeeper keys rotate` in another process) share the
 * database, so what a node holds can be behind, never wrong: keys are only ever added (a rotated-away key is retired,
 * still verifying), so a node's public keys are a subset of the stored ones and its signing key one of them.
 * - A token naming a key this node has not loaded yet (signed by a node that rotated): the key is looked up by its id.
 * - Signing: the newest key, asked for again at most every KEY_CHECK_MS; a node that learns a newer key from a token
 *   switches at once. Tokens signed meanwhile with the previous key verify on every node.
 */
export class KeyRing {
  private checkedAt: number;

  private constructor(
    private readonly db: Db,
    public kid: string,
    public privateKey: CryptoKey,
    public readonly publicKeys: Map<string, CryptoKey>,
    now: number,
  ) {
    this.checkedAt = now;
  }

  static async load(db: Db, now: number): Promise<KeyRing> {
    const rows = await allSigningKeys(db);
    const active = rows.find((r) => r.retired_at === null);
    if (!active) throw new Error('no signing key: run migrations and bootstrap first');
    const publicKeys = new Map<string, CryptoKey>();
    for (const row of rows) publicKeys.set(row.kid, await importPublic(row.public_jwk));
    const privateKey = (await importJWK(JSON.parse(active.private_jwk) as JWK, 'EdDSA')) as CryptoKey;
    return new KeyRing(db, active.kid, privateKey, publicKeys, now);
  }

  /** The key to sign with at `now`: the active one, checked against the database at most every KEY_CHECK_MS. */
  async signer(now: number): Promise<{ kid: string; privateKey: CryptoKey }> {
    if (now - this.checkedAt >= KEY_CHECK_MS || now < this.checkedAt) {
      this.checkedAt = now;
      const active = await activeKeyId(this.db);
      if (active !== undefined && active !== this.kid) await this.adopt(active);
    }
    return { kid: this.kid, privateKey: this.privateKey };
  }

  /** The public key of `kid`: loaded, or read from the database (a key added since this node loaded its ring). */
  async publicKey(kid: string): Promise<CryptoKey | undefined> {
    const known = this.publicKeys.get(kid);
    if (known !== undefined) return known;
    const row = await findSigningKey(this.db, kid);
    if (row === undefined) return undefined;
    const key = await importPublic(row.public_jwk);
    this.publicKeys.set(kid, key);
    if (row.retired_at === null) await this.adopt(kid);
    return key;
  }

  /** Signs with `kid` from now on, when it is still the active key. */
  private async adopt(kid: string): Promise<void> {
    const row = await findSigningKey(this.db, kid);
    if (row === undefined || row.retired_at !== null) return;
    const privateKey = (await importJWK(JSON.parse(row.private_jwk) as JWK, 'EdDSA')) as CryptoKey;
    if (!this.publicKeys.has(kid)) this.publicKeys.set(kid, await importPublic(row.public_jwk));
    this.kid = kid;
    this.privateKey = privateKey;
  }
}
