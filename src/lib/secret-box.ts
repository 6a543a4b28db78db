// Secrets the server must read again (TOTP secrets) are sealed at rest with AES-256-GCM under a key kept OUTSIDE the
// database — GRIDKEEPER_SECRET_KEY, or the key file <data-dir>/secret.key (mode 0600, created on first start) — so a
// copied database file or backup alone hands out no second factor. On PostgreSQL the key stays on the gridkeeper
// hosts all the same. Recovery codes and passwords are hashed, not sealed: they never need to be read back.
//
// Sealed text: `gk1.<key id>.<iv>.<ciphertext>.<tag>` (base64url parts). The key id (the first 8 bytes of the key's
// SHA-256, hex) says which key opens a value, so keys can be rotated (`gridkeeper secrets rotate`). The additional
// authenticated data names the value's place (`totp:<userId>`): a sealed value copied into another row does not open.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const KEY_FILE = 'secret.key';
const PREFIX = 'gk1';

export interface SecretKey {
  id: string;
  key: Buffer;
}

export interface SecretBox {
  /** the key new values are sealed under */
  readonly currentKeyId: string;
  seal(plain: string, aad: string): string;
  /** Throws SealError when no known key opens the value or it was tampered with. */
  open(sealed: string, aad: string): string;
}

export class SealError extends Error {}

export function isSealed(value: string): boolean {
  return value.startsWith(`${PREFIX}.`);
}

/** The id of the key a sealed value was sealed under. */
export function sealedKeyId(value: string): string | undefined {
  return isSealed(value) ? value.split('.')[1] : undefined;
}

export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

export function newSecretKey(): SecretKey {
  const key = randomBytes(32);
  return { id: keyId(key), key };
}

/** Keys as written in GRIDKEEPER_SECRET_KEY (comma-separated) or the key file (one per line): base64 or hex, 32 bytes. */
export function parseSecretKeys(text: string, where: string): SecretKey[] {
  const keys = text.split(/[,\n]/).map((s) => s.trim()).filter((s) => s !== '' && !s.startsWith('#')).map((s) => {
    const key = /^[0-9a-f]{64}$/i.test(s) ? Buffer.from(s, 'hex') : Buffer.from(s, 'base64');
    if (key.length !== 32 || (!/^[0-9a-f]{64}$/i.test(s) && key.toString('base64').replace(/=+$/, '') !== s.replace(/=+$/, ''))) {
      throw new SealError(`${where}: each key must be 32 bytes in base64 or hex (e.g. from \`openssl rand -base64 32\`)`);
    }
    return { id: keyId(key), key };
  });
  if (keys.length === 0) throw new SealError(`${where}: no key`);
  return keys;
}

export function formatKeyFile(keys: readonly SecretKey[]): string {
  return '# gridkeeper secret key: seals TOTP secrets in the database. Back it up apart from the database.\n'
    + '# The first key seals; the others (during a rotation) only open.\n'
    + keys.map((k) => `${k.key.toString('base64')}\n`).join('');
}

/** Writes the key file atomically (temporary file, fsync, rename), readable by its owner only. */
export function writeKeyFile(dataDir: string, keys: readonly SecretKey[]): void {
  const file = join(dataDir, KEY_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, formatKeyFile(keys));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  const dir = openSync(dataDir, 'r');
  try { fsyncSync(dir); } finally { closeSync(dir); }
}

/** Where the keys come from: the environment (fixed), a key file (read again when a value names an unknown key), or memory. */
export type KeySource =
  | { kind: 'env'; value: string }
  | { kind: 'file'; dataDir: string }
  | { kind: 'memory'; keys: SecretKey[] };

export function readKeys(source: KeySource): SecretKey[] {
  switch (source.kind) {
    case 'env': return parseSecretKeys(source.value, 'GRIDKEEPER_SECRET_KEY');
    case 'memory': return source.keys;
    case 'file': {
      const file = join(source.dataDir, KEY_FILE);
      return parseSecretKeys(readFileSync(file, 'utf8'), file);
    }
  }
}

/** The key source of a configuration: GRIDKEEPER_SECRET_KEY, else the data dir's key file, created when missing. */
export function keySourceOf(config: { secretKey?: string; dataDir: string }, options: { create: boolean }): KeySource {
  if (config.secretKey !== undefined) return { kind: 'env', value: config.secretKey };
  if (options.create && !existsSync(join(config.dataDir, KEY_FILE))) writeKeyFile(config.dataDir, [newSecretKey()]);
  return { kind: 'file', dataDir: config.dataDir };
}

export function createSecretBox(source: KeySource): SecretBox {
  let keys = readKeys(source);
  // A key file may change under a running server (`gridkeeper secrets rotate`): read it again before sealing, and when a
  // value names a key not loaded yet.
  const refresh = () => { if (source.kind === 'file') keys = readKeys(source); };
  const find = (id: string) => keys.find((k) => k.id === id);
  return {
    get currentKeyId() { return keys[0].id; },
    seal(plain, aad) {
      refresh();
      const { id, key } = keys[0];
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(aad, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [PREFIX, id, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed, aad) {
      const parts = sealed.split('.');
      if (parts.length !== 5 || parts[0] !== PREFIX) throw new SealError('not a sealed value');
      let key = find(parts[1]);
      if (!key) { refresh(); key = find(parts[1]); }
      if (!key) throw new SealError(`sealed under key ${parts[1]}, which is not among the configured keys`);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(parts[2], 'base64url'));
        decipher.setAAD(Buffer.from(aad, 'utf8'));
        decipher.setAuthTag(Buffer.from(parts[4], 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(parts[3], 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SealError(`a sealed value under key ${parts[1]} failed its integrity check`);
      }
    },
  };
}
