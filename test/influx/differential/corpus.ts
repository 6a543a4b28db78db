// The differential test's data and statements, generated from a seed: the same points go to InfluxDB 1.6.7 and to
// gridkeeper, then every statement runs on both. Statements cover every function, GROUP BY time with each fill mode,
// tag filters, regexes, ORDER/LIMIT/OFFSET, SLIMIT/SOFFSET, tz(), epoch and the SHOW statements.
import { mulberry32 } from '../../support/random.mjs';

export interface Point {
  measurement: string;
  tags: Record<string, string>;
  /** Unix seconds */
  time: number;
  fields: Record<string, number>;
}

export interface Case {
  q: string;
  /** epoch= parameter, if any */
  epoch?: string;
}

/** A seeded generator, so a failure can be reproduced. */
export const rng = mulberry32;

export const NODES = ['n1', 'n2', 'n3'];
const MINUTES = 90;

/** 90 minutes of points every 10 s from `base` (Unix seconds): energy for three nodes (n2 with a gap), weather for n1. */
export function points(base: number, seed: number): Point[] {
  const r = rng(seed);
  const out: Point[] = [];
  const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;
  for (let s = 0; s < MINUTES * 60; s += 10) {
    const time = base + s;
    NODES.forEach((nodeId, k) => {
      if (r() < 0.1) return; // missing points
      if (nodeId === 'n2' && s >= 1800 && s < 2400) return; // a 10-minute gap
      const tags: Record<string, string> = k < 2 ? { nodeId, phase: `L${1 + Math.floor(r() * 3)}` } : { nodeId };
      out.push({ measurement: 'energy', tags, time, fields: { power: round(r() * 550 - 50, 3), volts: round(225 + r() * 10, 2), count: Math.floor(r() * 100) } });
    });
    if (s % 60 === 0) out.push({ measurement: 'weather', tags: { nodeId: 'n1', site: s % 120 === 0 ? 'a' : 'b' }, time, fields: { temp: round(5 + r() * 10, 1), humidity: 40 + Math.floor(r() * 30) } });
  }
  return out;
}

/** At least `min` statements over the data of `points(base, …)`. */
export function statements(base: number, seed: number, min = 320): Case[] {
  const r = rng(seed + 1);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)];
  const t = (offsetS: number) => `${base + offsetS}s`;
  const range = () => {
    const from = Math.floor(r() * 40) * 60;
    const to = from + (10 + Math.floor(r() * 50)) * 60;
    return `time >= ${t(from)} AND time < ${t(to)}`;
  };
  const full = `time >= ${t(0)} AND time < ${t(MINUTES * 60)}`;
  const tagFilters = ['', "\"nodeId\" = 'n1' AND ", "\"nodeId\" =~ /^n[12]$/ AND ", "phase != 'L1' AND ", "(\"nodeId\" = 'n3' OR phase = 'L2') AND ", "\"nodeId\" !~ /3/ AND "];
  const out: Case[] = [];
  const add = (q: string, epoch?: string) => out.push(epoch ? { q, epoch } : { q });

  // SHOW statements
  for (const q of [
    'SHOW MEASUREMENTS', 'SHOW MEASUREMENTS WITH MEASUREMENT =~ /^en/', 'SHOW MEASUREMENTS WHERE "nodeId" = \'n3\'', 'SHOW MEASUREMENTS LIMIT 1 OFFSET 1',
    'SHOW TAG KEYS', 'SHOW TAG KEYS FROM energy', 'SHOW TAG KEYS FROM weather',
    'SHOW TAG VALUES WITH KEY = "nodeId"', 'SHOW TAG VALUES FROM energy WITH KEY IN ("nodeId", "phase")', 'SHOW TAG VALUES WITH KEY =~ /^s/',
    'SHOW TAG VALUES FROM energy WITH KEY = "phase" WHERE "nodeId" = \'n1\'', 'SHOW TAG VALUES FROM energy WITH KEY != "phase"',
    'SHOW FIELD KEYS', 'SHOW FIELD KEYS FROM energy', 'SHOW SERIES', 'SHOW SERIES FROM energy WHERE "nodeId" = \'n2\'', 'SHOW SERIES FROM weather',
    'SHOW SERIES LIMIT 3 OFFSET 2', 'SHOW DATABASES',
  ]) add(q);

  // aggregates and selectors over a range, grouped or not
  // mode() is compared on small windows only: InfluxDB orders equal values with Go's sort, which is stable only up
  // to 12 points, and mode's tie rule depends on that order (docs/influxdb.md: known differences)
  for (const field of ['count', 'power']) {
    add(`SELECT mode(${field}) FROM energy WHERE ${pick(tagFilters)}${range()} GROUP BY time(30s) fill(${pick(['null', 'none'])})`);
    add(`SELECT mode(${field}) FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()} GROUP BY time(1m)`);
  }
  const fns = ['count', 'sum', 'mean', 'median', 'spread', 'stddev', 'first', 'last', 'min', 'max'];
  for (const fn of fns) {
    for (const field of ['power', 'count']) {
      add(`SELECT ${fn}(${field}) FROM energy WHERE ${pick(tagFilters)}${range()}`);
      add(`SELECT ${fn}("${field}") FROM energy WHERE ${pick(tagFilters)}${range()} GROUP BY "nodeId"`);
      add(`SELECT ${fn}(${field}) FROM energy WHERE ${pick(tagFilters)}${range()} GROUP BY time(${pick(['1m', '5m', '7m', '30s'])}) fill(${pick(['null', 'none', '0', '-1.5', 'previous', 'linear'])})`);
      add(`SELECT ${fn}(${field}) FROM energy WHERE ${range()} GROUP BY time(${pick(['2m', '10m'])}), * fill(${pick(['null', 'none', 'previous'])})`);
    }
  }
  for (const fill of ['null', 'none', '0', 'previous', 'linear']) {
    for (const interval of ['1m', '3m', '15m']) add(`SELECT mean(power), max(count) FROM energy WHERE "nodeId" = 'n2' AND ${full} GROUP BY time(${interval}) fill(${fill})`);
  }
  add(`SELECT mean(power) FROM energy WHERE ${full} GROUP BY time(10m, 3m)`);
  add(`SELECT count(power) FROM energy WHERE ${full} GROUP BY time(10m, -2m) fill(none)`);
  add(`SELECT sum(count) FROM energy WHERE ${full} GROUP BY time(30m) tz('Europe/Brussels')`);
  add(`SELECT max(power) FROM energy WHERE "nodeId" = 'n1' AND ${full} tz('Europe/Brussels')`);
  // integral, percentile, top, bottom
  for (let i = 0; i < 6; i++) {
    add(`SELECT integral(power${pick(['', ', 1m', ', 1s', ', 1h'])}) FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()}`);
    add(`SELECT integral(power) FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()} GROUP BY time(${pick(['5m', '7m'])})`);
    // percentile() of a field with many equal values: which point's time InfluxDB answers depends on Go's sort (docs/influxdb.md)
    add(`SELECT percentile(power, ${pick([1, 5, 25, 50, 75, 95, 99, 100])}) FROM energy WHERE ${pick(tagFilters)}${range()}`);
    add(`SELECT percentile(power, ${pick([10, 50, 90])}) FROM energy WHERE ${range()} GROUP BY time(10m) fill(none)`);
    add(`SELECT top(power, ${pick([1, 3, 5])}) FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()}`);
    add(`SELECT bottom(count, ${pick([1, 2, 4])}) FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()}`);
  }
  // transformations over one series, raw and over GROUP BY time
  const one = () => `"nodeId" = 'n3' AND ${range()}`;
  for (const fn of ['derivative', 'non_negative_derivative', 'difference', 'non_negative_difference', 'cumulative_sum', 'elapsed']) {
    const unit = fn === 'derivative' || fn === 'non_negative_derivative' || fn === 'elapsed' ? pick(['', ', 1s', ', 1m', ', 10s']) : '';
    add(`SELECT ${fn}(power${unit}) FROM energy WHERE ${one()}`);
    add(`SELECT ${fn}(count${unit}) FROM energy WHERE ${one()}`);
    if (fn !== 'elapsed') {
      add(`SELECT ${fn}(mean(power)${unit}) FROM energy WHERE ${range()} GROUP BY time(${pick(['1m', '5m'])})`);
      add(`SELECT ${fn}(max(count)) FROM energy WHERE "nodeId" = 'n2' AND ${full} GROUP BY time(2m)`);
    }
  }
  for (const n of [1, 2, 3, 5]) {
    add(`SELECT moving_average(power, ${n}) FROM energy WHERE ${one()}`);
    add(`SELECT moving_average(mean(power), ${n}) FROM energy WHERE ${range()} GROUP BY time(1m)`);
  }
  // raw selects
  for (let i = 0; i < 12; i++) {
    add(`SELECT power, volts FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()} LIMIT ${pick([5, 10, 20])} OFFSET ${pick([0, 3])}`);
    add(`SELECT * FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()} ORDER BY time DESC LIMIT 8`);
    add(`SELECT power FROM energy WHERE ${pick(['power > 300', 'count < 10', 'power > 100 AND count >= 50', '(volts <= 226 OR power < 0)'])} AND "nodeId" = 'n1' AND ${range()}`);
    add(`SELECT power * 2 + volts, count / 4, count % 7 FROM energy WHERE "nodeId" = 'n2' AND ${range()} LIMIT 10`);
  }
  add(`SELECT "power"::field, "phase"::tag FROM energy WHERE "nodeId" = 'n1' AND ${range()} LIMIT 10`);
  add(`SELECT temp, humidity FROM weather WHERE ${full}`);
  add(`SELECT * FROM weather WHERE site = 'a' AND ${full}`);
  add(`SELECT mean(temp) FROM weather WHERE ${full} GROUP BY site`);
  add(`SELECT max(*) FROM weather WHERE ${full}`);
  add(`SELECT mean(power) FROM /^ener/ WHERE ${full} GROUP BY "nodeId"`);
  add(`SELECT count(power) FROM "site"."autogen"."energy" WHERE ${full}`);
  add(`SELECT count(power) FROM energy, weather WHERE ${full}`);
  add(`SELECT mean(power) FROM energy WHERE ${full} GROUP BY * SLIMIT 2 SOFFSET 1`);
  add(`SELECT power FROM energy WHERE ${full} GROUP BY "nodeId" LIMIT 3 SLIMIT 2`);
  add(`SELECT mean(power) FROM energy WHERE ${full} GROUP BY "nodeId" SLIMIT 1`);
  add(`SELECT last(power) FROM energy WHERE ${full} GROUP BY "nodeId", phase`);
  // epoch output
  for (const epoch of ['ns', 'u', 'ms', 's', 'm', 'h']) {
    add(`SELECT power FROM energy WHERE "nodeId" = 'n1' AND ${range()} LIMIT 3`, epoch);
    add(`SELECT mean(power) FROM energy WHERE ${range()} GROUP BY time(5m)`, epoch);
  }
  // top up with random grouped aggregates until the corpus is large enough
  while (out.length < min) {
    add(`SELECT ${pick(fns)}(${pick(['power', 'count', 'volts'])}) FROM energy WHERE ${pick(tagFilters)}${range()} GROUP BY time(${pick(['1m', '4m', '6m'])})${pick(['', ', "nodeId"', ', phase'])} fill(${pick(['null', 'none', '0', 'previous', 'linear'])})${pick(['', ' ORDER BY time DESC', ' LIMIT 4', ' LIMIT 3 OFFSET 2'])}`);
  }
  return out;
}
