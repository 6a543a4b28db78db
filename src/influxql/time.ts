// Time in InfluxQL answers and conditions: RFC3339 output (UTC, or a tz() zone's offset), epoch output in a unit,
// time zone offsets, and GROUP BY time windows aligned the way InfluxDB aligns them.
import { StatementError } from './errors.ts';
import { PAD3, secondsText } from '../lib/time-text.ts';
import { numberJson } from '../lib/number-json.ts';

/** Milliseconds per `epoch=` unit. */
export const EPOCH_UNITS: Record<string, number> = { ns: 1e-6, n: 1e-6, u: 1e-3, 'µ': 1e-3, us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

const zoneFormatters = new Map<string, Intl.DateTimeFormat>();

/** Checks a tz() argument; throws a StatementError for an unknown zone. */
export function checkZone(zone: string): void {
  formatter(zone);
}

function formatter(zone: string): Intl.DateTimeFormat {
  let f = zoneFormatters.get(zone);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
      });
    } catch {
      throw new StatementError(`unable to find time zone ${zone}`);
    }
    zoneFormatters.set(zone, f);
  }
  return f;
}

/** The zone's offset from UTC at the instant ms, in ms (UTC: 0). */
export function zoneOffsetMs(zone: string | undefined, ms: number): number {
  if (zone === undefined || zone === 'UTC') return 0;
  const parts = formatter(zone).formatToParts(new Date(Math.floor(ms / 1000) * 1000));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const local = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return local - Math.floor(ms / 1000) * 1000;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** UTC: the day's text is computed once for consecutive times of one day (lib/time-text.ts). */
function rfc3339Utc(ms: number, subNs: number): string {
  const milli = ms - Math.floor(ms / 1000) * 1000;
  let text = secondsText(ms);
  if (milli !== 0 || subNs !== 0) text += `.${(PAD3[milli]! + pad(subNs, 6)).replace(/0+$/, '')}`;
  return `${text}Z`;
}

/** RFC3339 with nanoseconds, trailing zeros of the fraction dropped (Go's RFC3339Nano), in UTC or the zone's offset. */
export function rfc3339(ms: number, subNs: number, zone?: string): string {
  if (zone === undefined && ms >= 0) return rfc3339Utc(ms, subNs);
  const offset = zoneOffsetMs(zone, ms);
  const d = new Date(ms + offset);
  const frac = (pad(d.getUTCMilliseconds(), 3) + pad(subNs, 6)).replace(/0+$/, '');
  let text = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  if (frac !== '') text += `.${frac}`;
  if (zone === undefined || offset === 0 && zone === 'UTC') return `${text}Z`;
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset) / 60_000;
  return `${text}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** The time as a JSON value: an RFC3339 string, or an integer in the epoch unit (as JSON text, exact for ns). */
export function timeJson(ms: number, subNs: number, epoch: string | undefined, zone?: string): string {
  if (epoch === undefined) return `"${rfc3339(ms, subNs, zone)}"`;
  if (epoch === 'ns' || epoch === 'n') {
    if (ms === 0) return String(subNs);
    return (BigInt(ms) * 1_000_000n + BigInt(subNs)).toString();
  }
  if (epoch === 'u' || epoch === 'µ' || epoch === 'us') return numberJson(ms * 1000 + Math.trunc(subNs / 1000));
  const unit = EPOCH_UNITS[epoch];
  return numberJson(Math.trunc(ms / unit));
}

const epochWriters = new Map<string, (ms: number, subNs: number) => string>();

/** timeJson for one epoch unit, as one function per unit (readers key the rows they keep by it). */
export function epochTimeJson(epoch: string): (ms: number, subNs: number) => string {
  let write = epochWriters.get(epoch);
  if (write === undefined) epochWriters.set(epoch, write = (ms, subNs) => timeJson(ms, subNs, epoch));
  return write;
}

/** Start (ms) of the GROUP BY time window holding t: InfluxDB's alignment (epoch-aligned, shifted by offset, in the zone). */
export function windowStart(t: number, intervalMs: number, offsetMs: number, zone?: string): number {
  let x = t - offsetMs;
  let zoneOff = zoneOffsetMs(zone, x);
  let dt = (x + zoneOff) % intervalMs;
  if (dt < 0) dt += intervalMs;
  let start = x - dt;
  if (zone !== undefined) {
    const startOff = zoneOffsetMs(zone, start);
    if (startOff !== zoneOff) {
      zoneOff = startOff;
      dt = (x + zoneOff) % intervalMs;
      if (dt < 0) dt += intervalMs;
      start = x - dt;
    }
  }
  x = start + offsetMs;
  return x;
}
