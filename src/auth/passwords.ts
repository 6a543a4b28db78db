// Password and secret hashing with scrypt (node:crypto) and a per-secret random salt.
// Format: scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>, so parameters can be raised later without breaking old hashes.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// N = 2^15, r = 8: each hash works on 32 MiB + 2 KiB (128·r·(N + 2) bytes plus the block). Above 32 MiB on purpose:
// glibc keeps a freed block of up to 32 MiB in the heap of the thread that used it, while a larger one is mapped and
// unmapped on its own, so the thread pool does not stay resident after hashing. Older hashes keep their parameters and
// are re-hashed with these at the next successful login or role join (rehashed).
const DEFAULT = { N: 32768, r: 8, p: 1 };
let params = DEFAULT;
const KEYLEN = 32;
/** node's default maxmem (32 MiB) is below what N = 2^15 needs */
const MAXMEM = 64 * 1024 * 1024;

/**
 * For test suites that create hundreds of accounts: hashes made from now on in this process use N = 2^10 (the format
 * records it, so they verify the same way). The service never calls this; test/auth/password-hash.test.ts checks the
 * real parameters.
 */
export function lighterHashesForTests(on = true): void {
  params = on ? { ...DEFAULT, N: 1024 } : DEFAULT;
}

function scrypt(secret: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCb(secret.normalize('NFKC'), salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p } = params;
  const hash = await scrypt(secret, salt, KEYLEN, { N, r, p, maxmem: MAXMEM });
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4], 'base64');
  const expected = Buffer.from(parts[5], 'base64');
  const actual = await scrypt(secret, salt, expected.length, { N: n, r, p, maxmem: MAXMEM });
  // constant-time: no timing oracle on how many bytes matched
  return timingSafeEqual(actual, expected);
}

/** Whether a stored hash (that just verified) was made with other parameters than hashSecret uses today. */
export function needsRehash(stored: string): boolean {
  return !stored.startsWith(`scrypt$${params.N}$${params.r}$${params.p}$`);
}

/** For a secret that just verified against `stored`: its hash with today's parameters, or undefined when `stored` has them. */
export async function rehashed(secret: string, stored: string): Promise<string | undefined> {
  return needsRehash(stored) ? hashSecret(secret) : undefined;
}

/**
 * A stored hash that no secret matches, to spend equal time on unknown users (no user-enumeration oracle): today's
 * parameters, a random salt and a random 32-byte value, so checking a secret against it costs one scrypt exactly like a
 * real hash, and nothing has to be hashed to make it (a start-up spends no hash on it).
 */
let dummy: { of: typeof params; hash: string } | undefined;
export function dummyHash(): string {
  if (dummy?.of !== params) {
    const { N, r, p } = params;
    dummy = { of: params, hash: `scrypt$${N}$${r}$${p}$${randomBytes(16).toString('base64')}$${randomBytes(KEYLEN).toString('base64')}` };
  }
  return dummy.hash;
}

/** A random password people can copy: 20 characters from an unambiguous alphabet (~113 bits). */
export function generatePassword(length = 20): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; out.length < length && i < bytes.length; i++) {
    const b = bytes[i];
    if (b < 256 - (256 % alphabet.length)) out += alphabet[b % alphabet.length]; // no modulo bias
  }
  return out.length === length ? out : generatePassword(length);
}
