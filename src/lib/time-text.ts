// Texts of unix-millisecond times, made without a Date per time: consecutive times mostly share their day, whose text
// (from Date itself, so every year Date knows is right) is computed once; the time of day is table look-ups.
// Listings of thousands of devices and telemetry rows format one time per row, where Date.toISOString was a tenth of
// the answer's cost.
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
