// A route meets the database's absence as DatabaseUnavailable (db/unavailable.ts), thrown wherever a statement ran;
// every renderer (the contract's error shape, InfluxDB's) answers it as 503 DATABASE_UNAVAILABLE.
import { DatabaseUnavailable } from '../db/unavailable.ts';
import { databaseUnavailable, type ApiError } from './errors.ts';

/** `thrown` as the ApiError it is answered with, when it is one the API names; anything else unchanged. */
export function asApiError(thrown: unknown): ApiError | unknown {
  return thrown instanceof DatabaseUnavailable ? databaseUnavailable() : thrown;
}
