// Recovery codes: 10 random codes of 16 characters (80 bits each), shown once, stored as HMAC-SHA-256 under a
// random per-code key. A slow hash buys nothing for 80-bit random secrets; the keyed hash keeps a leaked table useless.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const RECOVERY_CODE_COUNT = 10;
export const RECOVERY_CODE_LENGTH = 16;
/** 32 symbols without the look-alikes l, o, 0, 1: 5 bits each, and 256 % 32 = 0 so no modulo bias. */
const ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';

export function generateRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const bytes = randomBytes(RECOVERY_CODE_LENGTH);
    let code = '';
    for (const b of bytes) code += ALPHABET[b % ALPHABET.length];
    return code;
  });
}

/** Users may type codes in upper case or with spaces and dashes. */
export function normalizeRecoveryCode(input: string): string {
  return input.replace(/[\s-]/g, '').toLowerCase();
}

export function hashRecoveryCode(code: string, key: Buffer): Buffer {
  return createHmac('sha256', key).update(normalizeRecoveryCode(code)).digest();
}

export interface StoredRecoveryCode {
  id: number;
  hash_key: Buffer;
  code_hash: Buffer;
}

/** A fresh key and the code's hash under it, ready to store. */
export function protectRecoveryCode(code: string): { hash_key: Buffer; code_hash: Buffer } {
  const key = randomBytes(32);
  return { hash_key: key, code_hash: hashRecoveryCode(code, key) };
}

/**
 * The id of the unused code that `input` matches, or undefined. Every stored code is compared, in constant time,
 * whatever matched earlier: the time taken says nothing about which code (or how much of one) was right.
 */
export function matchRecoveryCode(input: string, unused: readonly StoredRecoveryCode[]): number | undefined {
  const normalized = normalizeRecoveryCode(input);
  let found: number | undefined;
  for (const row of unused) {
    const candidate = hashRecoveryCode(normalized, row.hash_key);
    const equal = candidate.length === row.code_hash.length && timingSafeEqual(candidate, row.code_hash);
    if (equal && found === undefined) found = row.id;
  }
  return normalized.length === RECOVERY_CODE_LENGTH ? found : undefined;
}
