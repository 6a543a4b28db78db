// One error type for the whole service. A route throws `new ApiError(code, message)`; onError renders the body
// `{ statusCode, error, message, code, ...extra }` (docs/api.md#errors). Unknown errors become a generic 500 that is
// logged with the request id and never echo their internal message.
import { STATUS_CODES } from 'node:http';

const STATUS_BY_CODE = {
  BAD_REQUEST: 400,
  NOT_SUPPORTED: 400,
  ALREADY_ACTIVATED: 400,
  ALREADY_CLAIMED: 400,
  LINE_PROTOCOL: 400,
  RESET_TOKEN_INVALID: 400,
  UNAUTHENTICATED: 401,
  PASSWORD_INCORRECT: 401,
  TWO_FACTOR_REQUIRED: 401,
  TOKEN_TOO_OLD: 401,
  TOTP_INCORRECT: 401,
  RECOVERY_CODE_INCORRECT: 401,
  FORBIDDEN: 403,
  SUDO_REQUIRED: 403,
  INSUFFICIENT_SCOPE: 403,
  ROLE_PASSWORD_INCORRECT: 403,
  DISPOSABLE_EMAIL: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  TOO_MANY_TOKENS: 409,
  ROLE_CYCLE: 409,
  LAST_ROOT_MEMBER: 409,
  LAST_MONITOR_MANAGEMENT: 409,
  NODE_ID_TAKEN: 409,
  LICENSE_IN_ORDER: 409,
  TOTP_UNINITIALIZED: 409,
  RECOVERY_CODES_UNINITIALIZED: 409,
  PRECONDITION_FAILED: 412,
  DEVICE_MODIFIED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE: 422,
  SCHEMA_VIOLATION: 422,
  PATCH_FAILED: 422,
  COST_EXCEEDS_CAPACITY: 422,
  UNKNOWN_SERIES: 422,
  FIELD_NOT_NUMERIC: 422,
  SERIES_NOT_READABLE: 422,
  TOO_MANY_FAILED_PASSWORD_CHECKS: 429,
  TOO_MANY_TOTP_CHECKS: 429,
  TOO_MANY_RECOVERY_CODE_CHECKS: 429,
  TOO_MANY_PASSWORD_CHECKS: 429,
  TOO_MANY_RESET_REQUESTS: 429,
  RATE_LIMITED: 429,
  IP_BANNED: 429,
  INTERNAL: 500,
  SERVICE_UNAVAILABLE: 503,
  DATABASE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof STATUS_BY_CODE;
export type ErrorStatus = (typeof STATUS_BY_CODE)[ErrorCode];

export function statusOf(code: ErrorCode): ErrorStatus {
  return STATUS_BY_CODE[code];
}

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  code: string;
  [extra: string]: unknown;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: ErrorStatus;
  /** Extra body fields named for this operation in docs/api.md (retryAfter, cost, partialAuthToken, ...). */
  readonly extra: Record<string, unknown>;
  /** Extra response headers (Retry-After, X-RateLimit-*). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: { extra?: Record<string, unknown>; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = STATUS_BY_CODE[code];
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }

  toBody(): ErrorBody {
    return errorBody(this.status, this.code, this.message, this.extra);
  }
}

export function errorBody(status: number, code: string, message: string, extra: Record<string, unknown> = {}): ErrorBody {
  return { statusCode: status, error: STATUS_CODES[status] ?? 'Error', message, code, ...extra };
}

/** Seconds a client is told to wait when the database cannot be reached (a restart or fail-over takes a few). */
export const DATABASE_RETRY_AFTER = 2;

/**
 * The answer to DatabaseUnavailable (db/unavailable.ts) while serving: 503, Retry-After. A write is all or nothing as
 * ever; only when the connection broke during its COMMIT may it have been stored (the server alone knows), so a
 * client sends it again as it would after a lost answer. The message never carries the driver's text (hosts, users).
 */
export const databaseUnavailable = () => new ApiError('DATABASE_UNAVAILABLE',
  `the database cannot be reached at the moment; retry after ${DATABASE_RETRY_AFTER} s`,
  { extra: { retryAfter: DATABASE_RETRY_AFTER }, headers: { 'Retry-After': String(DATABASE_RETRY_AFTER) } });

/** Shorthands for the common cases. */
export const badRequest = (message: string) => new ApiError('BAD_REQUEST', message);
export const notFound = (message = 'Not found') => new ApiError('NOT_FOUND', message);
export const forbidden = (message: string) => new ApiError('FORBIDDEN', message);
