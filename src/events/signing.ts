// Standard Webhooks signatures (standard-webhooks spec/, "Signature scheme"): HMAC-SHA256 over `id.timestamp.body`
// with the endpoint's secret, sent as `v1,<base64>`; during a rotation the header carries one signature per secret,
// space-separated, and the receiver accepts the delivery when any of them verifies.
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

const PREFIX = 'whsec_';
/** The specification asks for at least 24 random bytes and allows up to 64. */
const MIN_BYTES = 24;
const MAX_BYTES = 64;

/** A new secret: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** The key bytes of a `whsec_` secret, or undefined when it is not one (24 to 64 bytes of standard base64). */
export function webhookSecretKey(secret: string): Buffer | undefined {
  if (!secret.startsWith(PREFIX)) return undefined;
  const text = secret.slice(PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  const key = Buffer.from(text, 'base64');
  return key.length >= MIN_BYTES && key.length <= MAX_BYTES ? key : undefined;
}

/** The signing key of a stored `whsec_` secret (made once per secret and kept by the sender). */
export function signingKey(secret: string): KeyObject {
  const key = webhookSecretKey(secret);
  if (key === undefined) throw new Error('a stored webhook secret is not a whsec_ secret');
  return createSecretKey(key);
}

/** The webhook-signature header: one `v1,<signature>` per secret, space-separated. */
export function signatureHeader(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  return signWith(secrets.map(signingKey), id, timestampSeconds, body);
}

/** The webhook-signature header from keys made by signingKey. */
export function signWith(keys: readonly KeyObject[], id: string, timestampSeconds: number, body: string): string {
  const signed = `${id}.${timestampSeconds}.${body}`;
  let header = '';
  for (const key of keys) header += `${header === '' ? '' : ' '}v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
  return header;
}
