// If-Unmodified-Since (docs/api.md#if-unmodified-since): an ISO 8601 date-time or an HTTP-date. Parsed by hand, never with Date.parse:
// Date.parse reads a zone-less string (and asctime-date) in the server's LOCAL time zone, which would move the
// precondition by hours on a misconfigured host.
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

// 2026-01-02T03:04:05Z, 2026-01-02T03:04:05.678+02:00 (the zone is required: a local time is ambiguous)
const ISO = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;
// RFC 9110 §5.6.7: IMF-fixdate, and the obsolete rfc850-date and asctime-date a recipient must still accept
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`);

/** Unix milliseconds, or undefined when the value is none of the accepted forms or not a real date. */
export function parseUnmodifiedSince(value: string, now: number): number | undefined {
  const text = value.trim();
  let m = ISO.exec(text);
  if (m) {
    const [, y, mo, d, h, mi, s, frac, z, sign, oh, om] = m;
    const ms = frac ? Number(frac.padEnd(3, '0').slice(0, 3)) : 0;
    const base = utc(+y, +mo, +d, +h, +mi, +s, ms);
    if (base === undefined) return undefined;
    if (z) return base;
    if (+oh > 23 || +om > 59) return undefined;
    const offset = (+oh * 60 + +om) * 60_000;
    return sign === '+' ? base - offset : base + offset;
  }
  if ((m = IMF_FIXDATE.exec(text))) return utc(+m[3], month(m[2]), +m[1], +m[4], +m[5], +m[6], 0);
  if ((m = ASCTIME.exec(text))) return utc(+m[6], month(m[1]), +m[2].trim(), +m[3], +m[4], +m[5], 0);
  if ((m = RFC850.exec(text))) {
    // RFC 9110: a two-digit year more than 50 years in the future is in the past century
    const thisYear = new Date(now).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + +m[3];
    if (year > thisYear + 50) year -= 100;
    return utc(year, month(m[2]), +m[1], +m[4], +m[5], +m[6], 0);
  }
  return undefined;
}

function month(name: string): number {
  return MONTHS.indexOf(name) + 1;
}

/** Date.UTC that refuses out-of-range fields instead of rolling them over (Feb 30 is not Mar 2). */
function utc(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number | undefined {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 60) return undefined;
  const t = Date.UTC(y, mo - 1, d, h, mi, Math.min(s, 59), ms); // a leap second counts as :59
  return new Date(t).getUTCDate() === d ? t : undefined;
}
