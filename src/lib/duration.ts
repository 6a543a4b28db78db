// Durations of the retention setting and `telemetry prune --older-than`: an integer and a unit, e.g. `90d`, `12h`,
// `2w`, `30m`, `45s` (InfluxDB's retention-policy spelling). `0`, `off`, `none` and `inf` mean "keep forever".

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DURATION = /^([0-9]{1,9})(s|m|h|d|w)$/;
const FOREVER = new Set(['0', 'off', 'none', 'inf', 'infinite']);

export const DURATION_HINT = 'expected a duration like 90d, 12h, 2w, 30m or 45s (or off)';

/** Milliseconds of a duration, null for "keep forever", undefined when the text is not a duration. */
export function parseDurationMs(text: string): number | null | undefined {
  const t = text.trim().toLowerCase();
  if (FOREVER.has(t)) return null;
  const m = DURATION.exec(t);
  if (m === null) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2]];
  return ms > 0 ? ms : null;
}
