// Texts of unix-millisecond times, and the one parser of ISO 8601 date-times with an offset. The texts are made without
// a Date per time, since listings format one per row: consecutive times mostly share their day, whose text (from Date
// itself, so every year Date knows is right) is computed once; the time of day is table look-ups.
const DAY_MS = 86_400_000;
export const PAD2: readonly string[] = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
export const PAD3: readonly string[] = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
let cachedDay = Number.NaN;
let cachedPrefix = '';

/** `2026-01-02T03:04:05` of a unix ms time (an integer). */
export function secondsText(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  if (day !== cachedDay) setDay(day);
  let rest = ms - day * DAY_MS;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  return `${cachedPrefix}${PAD2[h]}:${PAD2[m]}:${PAD2[Math.floor(rest / 1000)]}`;
}

function setDay(day: number): void {
  const iso = new Date(day * DAY_MS).toISOString();
  cachedPrefix = iso.slice(0, iso.indexOf('T') + 1);
  cachedDay = day;
}

/** Exactly `new Date(ms).toISOString()` for an integer ms: `2026-01-02T03:04:05.678Z`. */
export function isoMillis(ms: number): string {
  return `${secondsText(ms)}.${PAD3[ms - Math.floor(ms / 1000) * 1000]}Z`;
}

// RFC 3339 date-time with a mandatory offset: a time without one would depend on the server's zone.
const ISO_WITH_OFFSET = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;

/** Unix ms of an ISO 8601 date-time with any UTC offset; undefined when it is not a real calendar instant. */
export function parseIsoWithOffset(text: string): number | undefined {
  const m = ISO_WITH_OFFSET.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number);
  const ms = Number((m[7] ?? '0').padEnd(3, '0').slice(0, 3));
  const offsetH = m[10] === undefined ? 0 : Number(m[10]);
  const offsetM = m[11] === undefined ? 0 : Number(m[11]);
  if (hour > 23 || minute > 59 || second > 59 || offsetH > 23 || offsetM > 59) return undefined;
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day); // setUTCFullYear keeps years 0-99 literal (Date.UTC would add 1900)
  local.setUTCHours(hour, minute, second, ms);
  // Date rolls 31 April over to 1 May: a changed day means the date does not exist.
  if (local.getUTCFullYear() !== year || local.getUTCMonth() !== month - 1 || local.getUTCDate() !== day) return undefined;
  const sign = m[9] === '-' ? -1 : 1;
  return local.getTime() - sign * (offsetH * 60 + offsetM) * 60_000;
}
