// TOTP (RFC 6238) through otplib 13: SHA-1, 6 digits, 30-second steps, issuer `gridkeeper`.
import { generateSecret, generateURI, verifySync } from 'otplib';

export const TOTP_ISSUER = 'gridkeeper';
export const TOTP_PERIOD = 30;
export const TOTP_DIGITS = 6;
/** One step either side: a code typed just before the turn of the half-minute, or a phone clock a little off. */
const TOLERANCE_S = TOTP_PERIOD;

/** 160 random bits (RFC 4226's recommendation), base32. */
export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

export function otpauthUrl(label: string, secret: string): string {
  return generateURI({ issuer: TOTP_ISSUER, label, secret, algorithm: 'sha1', digits: TOTP_DIGITS, period: TOTP_PERIOD });
}

/**
 * The RFC 6238 time step a code belongs to (within the tolerance), or undefined when it matches none.
 * Replay protection is the caller's: refuse a step <= the last one accepted.
 */
export function totpStep(secret: string, code: string, nowMs: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const result = verifySync({
    secret, token: code, algorithm: 'sha1', digits: TOTP_DIGITS, period: TOTP_PERIOD,
    epoch: Math.floor(nowMs / 1000), epochTolerance: TOLERANCE_S,
  });
  // otplib compares in constant time
  return result.valid && 'timeStep' in result ? result.timeStep : undefined;
}
