// One declaration per route: it fixes the order of checks (docs/api.md#check-order) (413 -> 415 -> 401 -> 400 -> handler),
// validates params, query and body with valibot, and records the same schemas for the OpenAPI document.
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Hono } from 'hono';
import * as v from 'valibot';
import { asApiError } from './database-errors.ts';
import { ApiError } from './errors.ts';
import { parseJsonBody, parseWith, refuseUnstorableText } from './validate.ts';
import type { AppEnv } from './env.ts';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Authenticates a request: sets c.var.actor or throws ApiError (401/403). `security` names the OpenAPI scheme. */
export interface Authenticator {
  security: 'accessBearerAuth' | 'refreshBearerAuth' | 'partialBearerAuth' | 'sudoBearerAuth' | 'apiTokenAuth';
  /** further schemes accepted, for the document */
  alsoAccepts?: Authenticator['security'][];
  authenticate(c: Context<AppEnv>): void | Promise<void>;
}

export interface ResponseSpec {
  description: string;
  schema?: v.GenericSchema;
  /** content type when not JSON, e.g. text/plain for tokens */
  contentType?: string;
}

type Schema = v.GenericSchema;
type Out<S> = S extends v.GenericSchema ? v.InferOutput<S> : undefined;

export interface RouteSpec<B extends Schema | undefined, Q extends Schema | undefined, P extends Schema | undefined> {
  method: Method;
  /** Hono path, e.g. /v1/role/:roleId/manages */
  path: string;
  summary: string;
  tag: string;
  auth?: Authenticator;
  /** JSON body schema. A missing body is validated as undefined (so v.optional(...) makes it optional). */
  body?: B;
  /** raw body routes (telemetry write) read c.req themselves; the limit still applies */
  rawBody?: { contentTypes: string[]; description: string };
  query?: Q;
  params?: P;
  responses: Record<number, ResponseSpec>;
  deprecated?: boolean;
  description?: string;
  /** body size limit in bytes; default 1 MiB */
  bodyLimit?: number;
  /** leave unknown query parameters alone (InfluxDB write compatibility) */
  looseQuery?: boolean;
  /** renders this route's ApiErrors (413, 401, ...) in another shape than the contract's (the InfluxDB 1.x door) */
  renderError?: (c: Context<AppEnv>, err: ApiError) => Response;
}

export interface RouteInput<B, Q, P> {
  body: Out<B>;
  query: Out<Q>;
  params: Out<P>;
  /** the request body as bytes, in the pieces it arrived in (rawBody routes only) */
  raw?: Uint8Array[];
}

export type AnyRouteSpec = RouteSpec<Schema | undefined, Schema | undefined, Schema | undefined>;

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** The registry of routes: registers handlers on the Hono app and keeps the specs for /openapi.json. */
export class Api {
  readonly specs: AnyRouteSpec[] = [];
  constructor(readonly app: Hono<AppEnv>) {}

  route<B extends Schema | undefined = undefined, Q extends Schema | undefined = undefined, P extends Schema | undefined = undefined>(
    spec: RouteSpec<B, Q, P>,
    handler: (c: Context<AppEnv>, input: RouteInput<B, Q, P>) => Response | Promise<Response>,
  ): void {
    this.specs.push(spec as AnyRouteSpec);
    const limit = spec.bodyLimit ?? DEFAULT_BODY_LIMIT;
    const hasBody = spec.body !== undefined || spec.rawBody !== undefined;
    const run = async (c: Context<AppEnv>): Promise<Response> => {
      // 413 from the declared length before anything else is read.
      const declared = Number(c.req.header('content-length') ?? 0);
      if (declared > limit) throw payloadTooLarge(limit);
      let chunks: Uint8Array[] | undefined;
      if (hasBody) {
        chunks = await readBody(c, limit);
        if (chunks.length > 0 && spec.body !== undefined) {
          const type = c.req.header('content-type');
          if (!type || !JSON_TYPE.test(type.trim())) {
            throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `expected Content-Type application/json, got ${type ? JSON.stringify(type) : 'none'}`);
          }
        }
      }
      if (spec.auth) await spec.auth.authenticate(c);
      // docs/api.md#bodies: U+0000 in a path or query value is refused like in a body
      const url = c.req.url;
      if (/%00/i.test(url)) throw new ApiError('BAD_REQUEST', 'the URL must not contain the NUL character (U+0000)');
      const params = spec.params ? parseWith(spec.params, c.req.param(), 'path') : undefined;
      // a route without query parameters, asked without a query string: nothing to check
      const query = spec.query === undefined && !url.includes('?') ? {}
        : spec.looseQuery ? parseWith(spec.query ?? v.any(), queryObject(url), 'query')
        : parseWith(spec.query ?? NO_QUERY, queryObject(url), 'query');
      // a query value itself cannot hold a lone surrogate (URLSearchParams decodes bytes), JSON it carries can
      refuseUnstorableText(query, 'query');
      let body: unknown;
      if (spec.body !== undefined) {
        const text = chunks && chunks.length > 0 ? decodeUtf8(joinBytes(chunks)) : undefined;
        body = parseWith(spec.body, text === undefined ? undefined : parseJsonBody(text), 'body');
        refuseUnstorableText(body);
      }
      return handler(c, { body, query, params, raw: spec.rawBody ? chunks : undefined } as RouteInput<B, Q, P>);
    };
    const render = spec.renderError;
    this.app.on(spec.method.toUpperCase(), spec.path, async (c) => {
      c.set('routePattern', spec.path);
      if (render === undefined) return run(c);
      try {
        return await run(c);
      } catch (thrown) {
        const err = asApiError(thrown);
        if (err instanceof ApiError) return render(c, err);
        throw err;
      }
    });
  }
}

const NO_QUERY = v.strictObject({});

function queryObject(url: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  const q = url.indexOf('?');
  if (q < 0) return {};
  for (const [key, value] of new URLSearchParams(url.slice(q + 1))) {
    const prev = out[key];
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return { ...out };
}

function payloadTooLarge(limit: number): ApiError {
  return new ApiError('PAYLOAD_TOO_LARGE', `request body exceeds ${limit} bytes`);
}

/**
 * Reads the body as the chunks it arrived in (none when it is empty), refusing it (413) as soon as it passes the limit,
 * whatever Content-Length said.
 * With a declared length within the limit, Node's HTTP parser delivers exactly that many bytes: on a Node server the
 * chunks are taken from the request as they come, on anything else the body is read in one call. No web Request or
 * stream is built, and nothing is copied (a large telemetry write would be). A body without a
 * declared length (chunked) is streamed and counted.
 */
async function readBody(c: Context, limit: number): Promise<Uint8Array[]> {
  const declared = c.req.header('content-length');
  try {
    if (declared !== undefined && /^\d{1,10}$/.test(declared) && Number(declared) <= limit) {
      if (declared === '0') return [];
      const incoming = nodeRequest(c);
      if (incoming !== undefined) return await readIncoming(incoming);
      const bytes = new Uint8Array(await c.req.raw.arrayBuffer());
      return bytes.length === 0 ? [] : [bytes];
    }
    return await readStream(c, limit);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    // the client went away or sent a broken body: nothing to answer with more precision
    throw new ApiError('BAD_REQUEST', 'body: the request body could not be read');
  }
}

/** The Node request under a request served by @hono/node-server (its bindings), while its body is still unread. */
function nodeRequest(c: Context): IncomingMessage | undefined {
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  return incoming instanceof IncomingMessage && !incoming.readableDidRead ? incoming : undefined;
}

/** The Node response under a request served by @hono/node-server (its bindings); none under app.request. */
export function nodeResponse(c: Context): ServerResponse | undefined {
  const outgoing = (c.env as { outgoing?: unknown } | undefined)?.outgoing;
  return outgoing instanceof ServerResponse ? outgoing : undefined;
}

/** The chunks of a Node request's body, as they arrive; rejects when the request ends before its body did. */
function readIncoming(incoming: IncomingMessage): Promise<Uint8Array[]> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    const onData = (chunk: Buffer | string) => { if (chunk.length > 0) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk); };
    const onEnd = () => { cleanup(); resolve(chunks); };
    const onError = (err: Error) => { cleanup(); reject(err); };
    const onClose = () => { cleanup(); reject(new Error('the request closed before its body ended')); };
    function cleanup(): void {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    }
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}

/** The chunks as one array of bytes (the chunk itself when there is one). */
export function joinBytes(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  let size = 0;
  for (const chunk of chunks) size += chunk.byteLength;
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) { out.set(chunk, at); at += chunk.byteLength; }
  return out;
}

async function readStream(c: Context, limit: number): Promise<Uint8Array[]> {
  const stream = c.req.raw.body;
  if (!stream) return [];
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw payloadTooLarge(limit);
    }
    if (value.byteLength > 0) chunks.push(value);
  }
  return chunks;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** For the pieces after the first: a U+FEFF there is text, not a byte order mark. */
const utf8Inner = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw invalidUtf8();
  }
}

function invalidUtf8(): ApiError {
  return new ApiError('BAD_REQUEST', 'body: invalid UTF-8');
}

/** Target size of the pieces of decodeUtf8Lines (bytes). */
export const LINE_PIECE_BYTES = 32 * 1024;
const NEWLINE = 0x0a;

/**
 * A body of lines, given as the chunks it arrived in, decoded as pieces of about LINE_PIECE_BYTES, each ending with a
 * line break (the last one: at the end of the body), so no line is split between two pieces. Their concatenation is
 * decodeUtf8 of the whole body: a line break byte is never part of a multi-byte sequence, so each piece is valid exactly
 * when the whole is. Only the bytes of a line that spans two chunks are copied.
 * Why pieces: V8 puts a string above ~128 KB in its large-object space, where creating it costs some forty times more
 * per byte than a smaller string.
 */
export function decodeUtf8Lines(chunks: readonly Uint8Array[]): string[] {
  const pieces: string[] = [];
  const emit = (bytes: Uint8Array) => {
    if (bytes.length > 0) pieces.push((pieces.length === 0 ? utf8 : utf8Inner).decode(bytes));
  };
  // the bytes of the piece begun in earlier chunks, not yet ended by a line break
  let open: Uint8Array[] = [];
  try {
    for (const chunk of chunks) {
      let from = 0;
      if (open.length > 0) {
        const nl = chunk.indexOf(NEWLINE);
        if (nl === -1) { open.push(chunk); continue; }
        open.push(chunk.subarray(0, nl + 1));
        emit(joinBytes(open));
        open = [];
        from = nl + 1;
      }
      while (chunk.length - from > LINE_PIECE_BYTES) {
        const nl = chunk.indexOf(NEWLINE, from + LINE_PIECE_BYTES - 1);
        if (nl === -1) break;
        emit(chunk.subarray(from, nl + 1));
        from = nl + 1;
      }
      const last = chunk.lastIndexOf(NEWLINE);
      if (last >= from) {
        emit(chunk.subarray(from, last + 1));
        from = last + 1;
      }
      if (from < chunk.length) open.push(chunk.subarray(from));
    }
    if (open.length > 0) emit(joinBytes(open));
  } catch {
    throw invalidUtf8();
  }
  return pieces;
}
