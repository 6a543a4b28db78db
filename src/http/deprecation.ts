// Deprecated GET collections answer like their POST query replacements, plus RFC 9745 / RFC 8288 headers.
import type { Context } from 'hono';

export function markDeprecated(c: Context, successor: string): void {
  c.header('Deprecation', 'true');
  c.header('Link', `<${successor}>; rel="successor-version"`);
}
