// Content-Encoding of telemetry writes (docs/api.md#bodies, #telemetry-write): gzip is decompressed with a hard output limit, so a
// "gzip bomb" stops at the limit (413) instead of allocating whatever it expands to.
import { gunzipSync } from 'node:zlib';
import { ApiError } from '../../http/errors.ts';
import { joinBytes } from '../../http/route.ts';

/** The request body after its Content-Encoding: identity (none) or gzip; anything else is 415. */
export function decodeContentEncoding(raw: Uint8Array[], encoding: string | undefined, limit: number): Uint8Array[] {
  const codings = (encoding ?? '').split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '' && s !== 'identity');
  if (codings.length === 0) return raw;
  if (codings.length > 1 || (codings[0] !== 'gzip' && codings[0] !== 'x-gzip')) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `unsupported Content-Encoding ${JSON.stringify(encoding)} (expected gzip or none)`);
  }
  if (raw.length === 0) return raw;
  try {
    // maxOutputLength makes zlib stop as soon as the output would pass the limit (ERR_BUFFER_TOO_LARGE).
    return [gunzipSync(joinBytes(raw), { maxOutputLength: limit })];
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new ApiError('PAYLOAD_TOO_LARGE', `request body exceeds ${limit} bytes after gzip decompression`);
    }
    throw new ApiError('BAD_REQUEST', 'body: not valid gzip data');
  }
}
