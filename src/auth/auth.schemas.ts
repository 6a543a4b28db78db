// Request and response schemas of the authentication API (validation and the OpenAPI document).
import * as v from 'valibot';
import { EMAIL } from '../lib/config.ts';
import { qString } from '../http/validate.ts';

const MAX_SECRET = 256;
export const MIN_PASSWORD_LENGTH = 10;

export const LoginBody = v.strictObject({
  username: v.pipe(v.string(), v.minLength(1, 'expected a non-empty string'), v.maxLength(MAX_SECRET, `expected at most ${MAX_SECRET} characters`)),
  password: v.pipe(v.string(), v.minLength(1, 'expected a non-empty string'), v.maxLength(MAX_SECRET, `expected at most ${MAX_SECRET} characters`)),
});

export const TotpBody = v.strictObject({
  totp: v.pipe(v.string(), v.length(6, 'expected exactly 6 characters')),
});

export const RecoveryCodeBody = v.strictObject({
  recoveryCode: v.pipe(v.string(), v.minLength(1, 'expected a non-empty string'), v.maxLength(64, 'expected at most 64 characters')),
});

const NewPassword = v.pipe(
  v.string(),
  v.minLength(MIN_PASSWORD_LENGTH, `expected at least ${MIN_PASSWORD_LENGTH} characters`),
  v.maxLength(MAX_SECRET, `expected at most ${MAX_SECRET} characters`),
);

export const PasswordBody = v.strictObject({
  currentPassword: v.optional(v.pipe(v.string(), v.maxLength(MAX_SECRET, `expected at most ${MAX_SECRET} characters`))),
  newPassword: NewPassword,
});

export const TierBody = v.strictObject({
  tier: v.picklist(['free', 'basic', 'premium'], 'expected free, basic or premium'),
});

export const TierParams = v.strictObject({
  email: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_SECRET, `expected at most ${MAX_SECRET} characters`)),
});

const ResetEmail = v.pipe(
  v.string('expected a string'), v.trim(), v.toLowerCase(),
  v.maxLength(MAX_SECRET, `expected at most ${MAX_SECRET} characters`),
  v.regex(EMAIL, 'expected an e-mail address'),
);

export const ForgotPasswordBody = v.strictObject({ email: ResetEmail });

/** `origin` (Eniris: the front-end asking) is accepted and not used: links always point at GRIDKEEPER_PUBLIC_URL. */
export const ForgotPasswordQuery = v.strictObject({
  origin: v.optional(v.pipe(qString, v.maxLength(2048, 'expected at most 2048 characters'))),
  language: v.optional(v.pipe(qString, v.maxLength(35, 'expected a language tag such as en, nl, fr or de'))),
});

export const ResetPasswordBody = v.strictObject({
  token: v.pipe(v.string('expected a string'), v.minLength(1, 'expected a non-empty string'), v.maxLength(128, 'expected at most 128 characters')),
  newPassword: NewPassword,
});

// ---- responses ----

const Iso = v.nullable(v.pipe(v.string(), v.isoTimestamp()));

export const UserIdResponse = v.object({ userId: v.number() });

export const TwoFactorStatus = v.object({
  enabled: v.boolean(),
  totp: v.object({ completedAt: Iso }),
  recoveryCodes: v.object({ completedAt: Iso, remaining: v.number() }),
});

export const TotpSetupResponse = v.object({ secret: v.string(), otpauthUrl: v.string() });

export const RecoveryCodesResponse = v.object({ recoveryCodes: v.array(v.string()) });

/** With an access token: only sudoToken. With a partial token: all three. */
export const SecondFactorResponse = v.object({
  accessToken: v.optional(v.string()),
  refreshToken: v.optional(v.string()),
  sudoToken: v.string(),
});

export const TwoFactorRequiredError = v.object({
  statusCode: v.literal(401),
  error: v.string(),
  message: v.string(),
  code: v.literal('TWO_FACTOR_REQUIRED'),
  partialAuthToken: v.string(),
});

export const ThrottledError = v.object({
  statusCode: v.literal(429),
  error: v.string(),
  message: v.string(),
  code: v.string(),
  retryAfter: v.number(),
});
