// Response headers every answer carries: no MIME sniffing, no referrer leaving the appliance, nothing stored by a
// cache (answers carry tokens and personal data; a route serving public, unchanging bytes says otherwise itself),
// and a Content-Security-Policy that allows nothing — an HTML page replaces it with one naming exactly its own inline
// script and style (htmlPolicy).
import { createHash } from 'node:crypto';

export const API_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * The headers every answer carries unless its route sets its own (request-frame.ts sets them). A route may replace
 * Cache-Control or Content-Security-Policy; none removes one.
 */
export const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cache-Control', 'no-store'],
  ['Content-Security-Policy', API_POLICY],
];

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The policy of a self-contained HTML page: its inline <script> and <style> blocks by hash, requests to this server
 * only, no frames, no plugins.
 */
export function htmlPolicy(html: string): string {
  const hashes = (tag: string) => [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => sha256(m[1]));
  const scripts = hashes('script');
  const styles = hashes('style');
  return [
    "default-src 'none'",
    `script-src ${scripts.length ? scripts.join(' ') : "'none'"}`,
    `style-src ${styles.length ? styles.join(' ') : "'none'"}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}
