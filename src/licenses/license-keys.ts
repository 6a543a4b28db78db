// License keys: GK-XXXXX-XXXXX-XXXXX-XXXXX-XXXXX. 25 symbols from a 32-symbol alphabet = 125 bits from the CSPRNG.
// The alphabet leaves out 0/O and 1/I so a key read off a label or a phone call types back unambiguously.
import { randomBytes } from 'node:crypto';

/** 2-9 and A-Z without I and O: 32 symbols, so one symbol is exactly 5 random bits (no modulo bias). */
export const KEY_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';
export const KEY_PREFIX = 'GK';
export const KEY_GROUPS = 5;
export const KEY_GROUP_LENGTH = 5;
export const KEY_BITS = KEY_GROUPS * KEY_GROUP_LENGTH * Math.log2(KEY_ALPHABET.length);

export const GENERATED_KEY = new RegExp(`^${KEY_PREFIX}(-[${KEY_ALPHABET}]{${KEY_GROUP_LENGTH}}){${KEY_GROUPS}}$`);

/** Random bytes source; injectable so tests can pin the mapping. */
export type RandomBytes = (n: number) => Uint8Array;

export function generateLicenseKey(random: RandomBytes = randomBytes): string {
  const symbols = KEY_GROUPS * KEY_GROUP_LENGTH;
  const bytes = random(symbols);
  if (bytes.length < symbols) throw new Error('random source returned too few bytes');
  const groups: string[] = [];
  for (let g = 0; g < KEY_GROUPS; g++) {
    let group = '';
    // 256 is a multiple of 32: the low five bits of a uniform byte are uniform.
    for (let i = 0; i < KEY_GROUP_LENGTH; i++) group += KEY_ALPHABET[bytes[g * KEY_GROUP_LENGTH + i] & 31];
    groups.push(group);
  }
  return [KEY_PREFIX, ...groups].join('-');
}
