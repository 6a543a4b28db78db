// Webhook secrets are sealed at rest like TOTP secrets (auth/secret-box.ts), each bound to its subscription's row: a
// sealed value copied to another row does not open.
import type { SecretBox } from '../lib/secret-box.ts';

const placeOf = (subscriptionId: number) => `event_subscriptions:${subscriptionId}:secret`;

export function sealSubscriptionSecret(box: SecretBox, subscriptionId: number, clear: string): string {
  return box.seal(clear, placeOf(subscriptionId));
}

export function openSubscriptionSecret(box: SecretBox, subscriptionId: number, sealed: string): string {
  return box.open(sealed, placeOf(subscriptionId));
}
