// Disposable-mail domains refused by forgot-password: a reset link sent to a throwaway inbox is readable by anyone who
// guesses the inbox name. A short excerpt of the community list at
// https://github.com/disposable-email-domains/disposable-email-domains (disposable_email_blocklist.conf), the
// best-known services only; subdomains of these count too.
const DISPOSABLE_DOMAINS = new Set([
  '10minutemail.com', 'dispostable.com', 'fakeinbox.com', 'getnada.com', 'grr.la', 'guerrillamail.com',
  'guerrillamail.net', 'guerrillamailblock.com', 'mailinator.com', 'maildrop.cc', 'mailnesia.com', 'mintemail.com',
  'sharklasers.com', 'spamgourmet.com', 'throwawaymail.com', 'trashmail.com', 'yopmail.com',
]);

/** Is the address at a known disposable-mail domain (or a subdomain of one)? */
export function isDisposableAddress(email: string): boolean {
  const at = email.lastIndexOf('@');
  if (at < 0) return false;
  const labels = email.slice(at + 1).toLowerCase().replace(/\.$/, '').split('.');
  for (let i = 0; i < labels.length - 1; i++) if (DISPOSABLE_DOMAINS.has(labels.slice(i).join('.'))) return true;
  return false;
}
