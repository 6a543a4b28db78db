// The differential test's data and statements, generated from a seed: the same points go to InfluxDB 1.6.7 and to
// gridkeeper, then every statement runs on both. Each statement carries the kind of rule it exercises, so that a
// difference can be counted by kind: aggregates, fill modes, functions of string and boolean fields, wildcards, the
// times of selected points, selectors beside other fields, transformations over GROUP BY time, errors, queries
// without a lower time bound, raw selects, epochs, the SHOW statements, transformations and integral() newest first,
// top() and bottom() under LIMIT, operators over string, boolean and tag operands, and distinct() newest first.

export type FieldValue = number | string | boolean;
import { mulberry32 } from '../../support/random.mjs';

export interface Point {
  measurement: string;
  tags: Record<string, string>;
  /** Unix milliseconds */
  time: number;
  fields: Record<string, FieldValue>;
}

export interface Case {
  q: string;
  /** the rule the statement exercises */
  kind: string;
  /** epoch= parameter, if any */
  epoch?: string;
  /** rp= parameter, if any */
  rp?: string;
}

/**
 * The retention policy the statements without a lower time bound read: its name's ending gives it gridkeeper's
 * cheapest worst-case range per query (docs/api.md#namespaces), so that they fit the premium bucket.
 */
export const UNBOUNDED_RP = 'history_one_h';

/** Fields written as floats even when a value is whole (JSON has one number type). */
export const FLOAT_FIELDS = ['power', 'volts', 'temp', 'freq', 'soc'];

/** A seeded generator, so a failure can be reproduced. */
export const rng = mulberry32;

export const NODES = ['n1', 'n2', 'n3'];
export const MINUTES = 90;
const STATES = ['on', 'off', 'idle', 'fault'];

/**
 * 90 minutes of points every 10 s from `base` (Unix seconds): energy for three nodes (n1 and n2 over three phases,
 * n2 with a 10-minute gap, n3 alone writing `freq`), with a string field and a boolean field on some points only;
 * points 1 to 3 ms either side of some minute edges; weather for n1 on two sites; a battery of n3; a gauge of n1.
 */
export function points(base: number, seed: number): Point[] {
  const r = rng(seed);
  const out: Point[] = [];
  const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;
  for (let s = 0; s < MINUTES * 60; s += 10) {
    NODES.forEach((nodeId, k) => {
      if (r() < 0.1) return; // missing points
      if (nodeId === 'n2' && s >= 1800 && s < 2400) return; // a 10-minute gap
      const tags: Record<string, string> = k < 2 ? { nodeId, phase: `L${1 + Math.floor(r() * 3)}` } : { nodeId };
      const fields: Record<string, FieldValue> = { power: round(r() * 550 - 50, 3), volts: round(225 + r() * 10, 2), count: Math.floor(r() * 100) };
      if (r() < 0.7) fields.state = STATES[Math.floor(r() * STATES.length)];
      if (r() < 0.5) fields.ok = r() < 0.6;
      if (nodeId === 'n3') fields.freq = round(49.9 + r() * 0.2, 3);
      // a point 1 to 3 ms before or after a minute edge
      const edge = s % 60 === 0 && r() < 0.3 ? (r() < 0.5 ? -1 : 1) : 0;
      // each node writes at its own offset (0, 3 s, 6 s): no two series share an instant, whose order InfluxDB
      // leaves to its merge (docs/influxdb.md: known differences)
      out.push({ measurement: 'energy', tags, time: (base + s) * 1000 + (edge === 0 ? k * 3000 : edge * (k + 1)), fields });
    });
    if (s % 60 === 0) {
      out.push({ measurement: 'weather', tags: { nodeId: 'n1', site: s % 120 === 0 ? 'a' : 'b' }, time: (base + s) * 1000, fields: { temp: round(5 + r() * 10, 1), humidity: 40 + Math.floor(r() * 30) } });
    }
    if (s % 30 === 0 && s < 3600) {
      out.push({ measurement: 'battery', tags: { nodeId: 'n3' }, time: (base + s) * 1000, fields: { soc: round(20 + s / 60 + r(), 2), mode: r() < 0.5 ? 'charge' : 'discharge', charging: r() < 0.5 } });
    }
  }
  // a gauge with two gaps, written the same for every seed: fill(linear) of its integers lands on values that
  // InfluxDB's arithmetic (in windows) truncates differently from the same line in nanoseconds (44, not 43.99…)
  for (const [s, level] of [[0, 86], [600, 16], [1500, 40]]) {
    out.push({ measurement: 'gauge', tags: { nodeId: 'n1' }, time: (base + s) * 1000, fields: { level } });
  }
  return out;
}

/** At least `min` statements over the data of `points(base, …)`. */
export function statements(base: number, seed: number, min = 560): Case[] {
  const r = rng(seed + 1);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)];
  const t = (offsetS: number) => `${base + offsetS}s`;
  const range = () => {
    const from = Math.floor(r() * 40) * 60;
    const to = from + (10 + Math.floor(r() * 50)) * 60;
    return `time >= ${t(from)} AND time < ${t(to)}`;
  };
  // a short range (mode() ties and sample() need few points per window)
  const short = () => {
    const from = Math.floor(r() * 80) * 60;
    return `time >= ${t(from)} AND time < ${t(from + 120 + Math.floor(r() * 4) * 60)}`;
  };
  const twoMinutes = () => {
    const from = Math.floor(r() * 80) * 60;
    return `time >= ${t(from)} AND time < ${t(from + 120)}`;
  };
  const full = `time >= ${t(0)} AND time < ${t(MINUTES * 60)}`;
  const tagFilters = ['', "\"nodeId\" = 'n1' AND ", "\"nodeId\" =~ /^n[12]$/ AND ", "phase != 'L1' AND ", "(\"nodeId\" = 'n3' OR phase = 'L2') AND ", "\"nodeId\" !~ /3/ AND "];
  const oneSeries = () => pick(["\"nodeId\" = 'n3'", "\"nodeId\" = 'n1' AND phase = 'L2'", "\"nodeId\" = 'n2' AND phase = 'L1'"]);
  const out: Case[] = [];
  let kind = 'show';
  const add = (q: string, epoch?: string) => out.push({ q, kind, ...(epoch ? { epoch } : {}), ...(kind === 'no-lower-bound' ? { rp: UNBOUNDED_RP } : {}) });

  kind = 'show';
  for (const q of [
    'SHOW MEASUREMENTS', 'SHOW MEASUREMENTS WITH MEASUREMENT =~ /^en/', 'SHOW MEASUREMENTS WHERE "nodeId" = \'n3\'', 'SHOW MEASUREMENTS LIMIT 1 OFFSET 1',
    'SHOW TAG KEYS', 'SHOW TAG KEYS FROM energy', 'SHOW TAG KEYS FROM weather',
    'SHOW TAG VALUES WITH KEY = "nodeId"', 'SHOW TAG VALUES FROM energy WITH KEY IN ("nodeId", "phase")', 'SHOW TAG VALUES WITH KEY =~ /^s/',
    'SHOW TAG VALUES FROM energy WITH KEY = "phase" WHERE "nodeId" = \'n1\'', 'SHOW TAG VALUES FROM energy WITH KEY != "phase"',
    'SHOW FIELD KEYS', 'SHOW FIELD KEYS FROM energy', 'SHOW FIELD KEYS FROM battery', 'SHOW SERIES', 'SHOW SERIES FROM energy WHERE "nodeId" = \'n2\'', 'SHOW SERIES FROM weather',
    'SHOW SERIES LIMIT 3 OFFSET 2', 'SHOW DATABASES',
  ]) add(q);

  // aggregates and selectors of numeric fields over a range, grouped or not
  kind = 'aggregate';
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
  add(`SELECT mean(power) FROM energy WHERE ${full} GROUP BY time(10m, 3m)`);
  add(`SELECT count(power) FROM energy WHERE ${full} GROUP BY time(10m, -2m) fill(none)`);
  add(`SELECT sum(count) FROM energy WHERE ${full} GROUP BY time(30m) tz('Europe/Brussels')`);
  add(`SELECT max(power) FROM energy WHERE "nodeId" = 'n1' AND ${full} tz('Europe/Brussels')`);
  add(`SELECT mean(temp) FROM weather WHERE ${full} GROUP BY site`);
  add(`SELECT mean(power) FROM /^ener/ WHERE ${full} GROUP BY "nodeId"`);
  add(`SELECT count(power) FROM "s${seed}"."autogen"."energy" WHERE ${full}`);
  add(`SELECT count(power) FROM energy, weather WHERE ${full}`);
  add(`SELECT mean(power) FROM energy WHERE ${full} GROUP BY * SLIMIT 2 SOFFSET 1`);
  add(`SELECT mean(power) FROM energy WHERE ${full} GROUP BY "nodeId" SLIMIT 1`);
  add(`SELECT last(power) FROM energy WHERE ${full} GROUP BY "nodeId", phase`);
  add(`SELECT mean(freq), max(volts) FROM energy WHERE ${range()} GROUP BY "nodeId"`);
  for (let i = 0; i < 4; i++) {
    add(`SELECT integral(power${pick(['', ', 1m', ', 1s', ', 1h'])}) FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()} GROUP BY time(${pick(['5m', '7m'])})`);
    add(`SELECT percentile(power, ${pick([10, 50, 90])}) FROM energy WHERE ${range()} GROUP BY time(10m) fill(none)`);
  }

  // fill(): every mode over the gap, fill(N) of each field type
  kind = 'fill';
  for (const fill of ['null', 'none', '0', 'previous', 'linear']) {
    for (const interval of ['1m', '3m', '15m']) add(`SELECT mean(power), max(count) FROM energy WHERE "nodeId" = 'n2' AND ${full} GROUP BY time(${interval}) fill(${fill})`);
  }
  for (let i = 0; i < 14; i++) {
    const fn = pick(['mean', 'sum', 'max', 'min', 'first', 'last', 'count', 'median', 'spread']);
    const field = pick(['count', 'power', 'count']);
    add(`SELECT ${fn}(${field}) FROM energy WHERE "nodeId" = 'n2' AND ${range()} GROUP BY time(${pick(['1m', '2m', '5m'])}) fill(${pick(['42.5', '-3.7', '7', '0.5', '-1'])})`);
  }
  for (const fill of ['-2.5', 'previous', 'linear']) {
    // each call is filled before the arithmetic
    add(`SELECT ${pick(['median', 'max', 'count'])}(count) * 2, mean(power) - last(power) FROM energy WHERE "nodeId" = 'n2' AND ${range()} GROUP BY time(2m) fill(${fill})`);
  }
  for (const fill of ['null', 'none', '0', '5', 'previous', 'linear']) {
    add(`SELECT count(power) FROM energy WHERE "nodeId" = 'n2' AND ${range()} GROUP BY time(${pick(['1m', '2m'])}) fill(${fill})`);
    add(`SELECT count(state), count(ok) FROM energy WHERE "nodeId" = 'n2' AND ${range()} GROUP BY time(${pick(['1m', '2m'])}) fill(${fill})`);
  }

  // functions of string and boolean fields
  kind = 'string-boolean';
  for (const field of ['state', 'ok']) {
    for (const fn of ['count', 'first', 'last', 'distinct']) {
      add(`SELECT ${fn}(${field}) FROM energy WHERE ${pick(tagFilters)}${range()}`);
      add(`SELECT ${fn}(${field}) FROM energy WHERE ${pick(tagFilters)}${range()} GROUP BY "nodeId"`);
      add(`SELECT ${fn}(${field}) FROM energy WHERE ${oneSeries()} AND ${short()} GROUP BY time(${pick(['1m', '30s'])}) fill(${pick(['null', 'none'])})`);
    }
    add(`SELECT mode(${field}) FROM energy WHERE ${oneSeries()} AND ${short()} GROUP BY time(1m)`);
    // at most 12 points: Go's sort decides mode()'s ties beyond (README: known differences)
    add(`SELECT mode(${field}) FROM energy WHERE "nodeId" = 'n3' AND ${twoMinutes()}`);
    add(`SELECT sample(${field}, 100) FROM energy WHERE ${oneSeries()} AND ${short()}`);
    add(`SELECT sample(${field}, 50) FROM energy WHERE ${oneSeries()} AND ${short()} GROUP BY time(1m)`);
    add(`SELECT count(${field}) FROM energy WHERE ${range()} GROUP BY time(10m), "nodeId" fill(${pick(['null', 'none', '0'])})`);
    add(`SELECT ${field} FROM energy WHERE ${oneSeries()} AND ${short()}`);
    add(`SELECT last(${field}), count(${field}) FROM energy WHERE ${range()} GROUP BY "nodeId"`);
    add(`SELECT first(${field}) FROM energy WHERE ${oneSeries()} AND ${range()} GROUP BY time(5m) fill(previous)`);
  }
  for (let i = 0; i < 4; i++) {
    add(`SELECT power, state FROM energy WHERE state = '${pick(STATES)}' AND "nodeId" = 'n1' AND ${short()}`);
    add(`SELECT count(power) FROM energy WHERE ok = ${pick(['true', 'false'])} AND ${range()} GROUP BY "nodeId"`);
    add(`SELECT distinct(state) FROM energy WHERE ${range()} GROUP BY time(${pick(['5m', '15m'])})`);
  }
  add(`SELECT count(mode), first(charging), last(mode), distinct(charging) FROM battery WHERE ${full}`);
  add(`SELECT count(distinct(state)) FROM energy WHERE ${range()}`);
  add(`SELECT count(distinct(state)) FROM energy WHERE ${range()} GROUP BY time(10m)`);

  // wildcards over every field type
  kind = 'wildcard';
  for (const fn of ['count', 'first', 'last', 'max', 'min', 'mean', 'sum', 'distinct', 'spread']) {
    add(`SELECT ${fn}(*) FROM ${pick(['energy', 'battery', 'weather'])} WHERE ${pick(tagFilters)}${short()}`);
  }
  for (const fn of ['count', 'first', 'last', 'max', 'mean']) {
    add(`SELECT ${fn}(*) FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()} GROUP BY time(${pick(['5m', '10m'])}) fill(${pick(['null', 'none'])})`);
    add(`SELECT ${fn}(*) FROM energy, battery WHERE ${range()} GROUP BY "nodeId"`);
  }
  for (let i = 0; i < 4; i++) {
    add(`SELECT * FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()} ORDER BY time DESC LIMIT 8`);
    add(`SELECT * FROM energy, battery WHERE "nodeId" = 'n3' AND ${short()} LIMIT 10`);
    add(`SELECT * FROM /^(energy|battery)$/ WHERE ${short()} LIMIT ${pick([5, 20])}`);
    add(`SELECT * FROM energy WHERE ${short()} GROUP BY * LIMIT 3`);
  }
  add(`SELECT *::field FROM battery WHERE ${short()}`);
  add(`SELECT * FROM weather WHERE site = 'a' AND ${full}`);
  add(`SELECT max(*) FROM weather WHERE ${full}`);
  add(`SELECT count(*) FROM /./ WHERE ${full}`);
  add(`SELECT first(*) FROM /./ WHERE ${full} GROUP BY "nodeId"`);

  // the time of the selected point
  kind = 'selected-time';
  for (let i = 0; i < 5; i++) {
    for (const fn of ['first', 'last', 'min', 'max']) {
      add(`SELECT ${fn}(${pick(['power', 'volts', 'freq'])}) FROM energy WHERE ${pick(tagFilters)}${range()}`);
    }
    add(`SELECT ${pick(['first', 'last'])}(${pick(['state', 'ok', 'count'])}) FROM energy WHERE ${pick(tagFilters)}${range()} GROUP BY "nodeId"`);
    add(`SELECT percentile(power, ${pick([1, 5, 25, 50, 75, 95, 99, 100])}) FROM energy WHERE ${pick(tagFilters)}${range()}`);
    add(`SELECT top(power, ${pick([1, 3, 5])}) FROM energy WHERE ${pick(tagFilters)}${range()}`);
    add(`SELECT bottom(power, ${pick([1, 2, 4])}) FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()}`);
    add(`SELECT top(power, ${pick([1, 2, 3])}) FROM energy WHERE ${pick(tagFilters)}${range()} GROUP BY time(${pick(['5m', '10m'])})`);
    add(`SELECT bottom(volts, 2) FROM energy WHERE ${range()} GROUP BY time(${pick(['5m', '10m'])}), "nodeId"`);
    add(`SELECT sample(power, 100) FROM energy WHERE ${oneSeries()} AND ${short()}`);
    add(`SELECT integral(power${pick(['', ', 1m', ', 1s', ', 1h'])}) FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()}`);
    add(`SELECT max(power) FROM energy WHERE ${range()} GROUP BY "nodeId"`);
    add(`SELECT min(freq), max(freq) FROM energy WHERE ${range()}`);
  }

  // selectors beside other fields and tags; top/bottom with a tag
  kind = 'selector-beside';
  for (let i = 0; i < 5; i++) {
    add(`SELECT ${pick(['max', 'min', 'first', 'last'])}(power), ${pick(['volts', 'count', 'state', 'ok', 'phase', '"nodeId"', 'volts, phase'])} FROM energy WHERE ${pick(tagFilters)}${range()}`);
    add(`SELECT ${pick(['max', 'min'])}(power), volts, "nodeId" FROM energy WHERE ${range()} GROUP BY time(${pick(['5m', '10m'])})`);
    add(`SELECT top(power, ${pick(['"nodeId"', 'phase'])}, ${pick([1, 2, 3])}) FROM energy WHERE ${range()}`);
    add(`SELECT bottom(count, "nodeId", ${pick([1, 2])}) FROM energy WHERE ${range()}`);
    add(`SELECT top(power, ${pick([2, 3])}), ${pick(['volts', 'phase', 'state', '"nodeId"'])} FROM energy WHERE ${pick(tagFilters)}${range()}`);
    add(`SELECT bottom(power, 2), volts FROM energy WHERE ${range()} GROUP BY time(${pick(['10m', '15m'])})`);
    add(`SELECT max(power), * FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()}`);
    add(`SELECT top(power, "nodeId", 2), volts FROM energy WHERE ${range()}`);
  }
  add(`SELECT max(power), volts FROM energy WHERE ${range()} GROUP BY "nodeId"`);
  for (const fill of ['previous', 'none', 'null', '7', '7.5', 'linear']) {
    add(`SELECT ${pick(['max', 'first', 'last'])}(power), volts, state, ok, count, phase FROM energy WHERE "nodeId" = 'n2' AND ${range()} GROUP BY time(${pick(['2m', '5m'])}) fill(${fill})${pick(['', ' ORDER BY time DESC'])}`);
  }
  add(`SELECT percentile(power, 50), volts FROM energy WHERE "nodeId" = 'n1' AND ${range()}`);

  // transformations, raw and over GROUP BY time with fill()
  kind = 'transformation';
  const one = () => `"nodeId" = 'n3' AND ${range()}`;
  for (const fn of ['derivative', 'non_negative_derivative', 'difference', 'non_negative_difference', 'cumulative_sum', 'elapsed']) {
    const unit = () => (fn === 'derivative' || fn === 'non_negative_derivative' || fn === 'elapsed' ? pick(['', ', 1s', ', 1m', ', 10s']) : '');
    add(`SELECT ${fn}(power${unit()}) FROM energy WHERE ${one()}`);
    add(`SELECT ${fn}(count${unit()}) FROM energy WHERE ${one()}`);
    for (let i = 0; i < 4; i++) {
      add(`SELECT ${fn}(${pick(['mean', 'max', 'sum', 'count', 'last'])}(${pick(['power', 'count'])})${unit()}) FROM energy WHERE ${pick(["\"nodeId\" = 'n2' AND ", "\"nodeId\" = 'n3' AND ", ''])}${range()} GROUP BY time(${pick(['1m', '2m', '5m'])}) fill(${pick(['null', 'none', '0', 'previous', 'linear', '-5'])})`);
    }
    add(`SELECT ${fn}(max(count)) FROM energy WHERE "nodeId" = 'n2' AND ${full} GROUP BY time(2m)`);
    add(`SELECT ${fn}(mean(power)) FROM energy WHERE ${range()} GROUP BY time(5m), "nodeId"`);
  }
  for (const n of [2, 3, 5]) {
    add(`SELECT moving_average(power, ${n}) FROM energy WHERE ${one()}`);
    add(`SELECT moving_average(mean(power), ${n}) FROM energy WHERE ${range()} GROUP BY time(1m)`);
    add(`SELECT moving_average(mean(power), ${n}) FROM energy WHERE "nodeId" = 'n2' AND ${full} GROUP BY time(2m) fill(${pick(['null', 'none', '0', 'previous', 'linear'])})`);
  }
  add(`SELECT derivative(mean(power), 1m), mean(power) FROM energy WHERE ${range()} GROUP BY time(2m)`);
  add(`SELECT difference(max(power)) - 3, max(power) FROM energy WHERE ${range()} GROUP BY time(2m)`);
  add(`SELECT integral(power, 1m) * 2, last(power) FROM energy WHERE "nodeId" = 'n1' AND ${range()}`);

  // errors InfluxDB gives
  kind = 'error';
  for (const q of [
    `SELECT power FROM energy WHERE ${range()} GROUP BY time(1m)`,
    `SELECT derivative(power) FROM energy WHERE ${range()} GROUP BY time(1m)`,
    `SELECT mean(power), power FROM energy WHERE ${range()}`,
    `SELECT top(power, 0) FROM energy WHERE ${range()}`,
    `SELECT top(power) FROM energy WHERE ${range()}`,
    `SELECT percentile(power) FROM energy WHERE ${range()}`,
    `SELECT moving_average(power, 1) FROM energy WHERE ${range()}`,
    `SELECT sum(state) FROM energy WHERE ${range()}`,
    `SELECT mean(ok) FROM energy WHERE ${range()}`,
    `SELECT max(state) FROM energy WHERE ${range()}`,
    `SELECT median(ok) FROM energy WHERE ${range()}`,
    `SELECT derivative(state) FROM energy WHERE "nodeId" = 'n3' AND ${range()}`,
    `SELECT top(state, 2) FROM energy WHERE ${range()}`,
    `SELECT integral(state) FROM energy WHERE ${range()}`,
    `SELECT time FROM energy WHERE ${range()}`,
    `SELECT "nodeId" FROM energy WHERE ${range()}`,
    `SELECT count(power) FROM energy WHERE ${range()} GROUP BY time(1m), time(2m)`,
    `SELECT mean(power) FROM energy WHERE ${range()} GROUP BY time(0s)`,
    `SELECT max(power) + power FROM energy WHERE ${range()}`,
    `SELECT bogus(power) FROM energy WHERE ${range()}`,
    `SELECT count() FROM energy WHERE ${range()}`,
    `SELECT mean(power, 2) FROM energy WHERE ${range()}`,
    `SELECT derivative(mean(power), 1m, 2) FROM energy WHERE ${range()} GROUP BY time(1m)`,
    `SELECT top(power, "nodeId", phase) FROM energy WHERE ${range()}`,
    `SELECT top(power, 1), bottom(power, 1) FROM energy WHERE ${range()}`,
    `SELECT sample(power, 0) FROM energy WHERE ${range()}`,
    `SELECT elapsed(mean(power), 1m) FROM energy WHERE ${range()}`,
    `SELECT cumulative_sum(power) FROM energy WHERE ${range()} GROUP BY time(1m)`,
    `SELECT mean(power) FROM energy WHERE ${range()} fill(0)`,
    `SELECT count(distinct(power)), power FROM energy WHERE ${range()}`,
    `SELECT distinct(power), count(power) FROM energy WHERE ${range()}`,
    `SELECT mode(*), power FROM energy WHERE ${range()}`,
    `SELECT difference(bottom(power, 2)) FROM energy WHERE ${range()} GROUP BY time(5m)`,
    `SELECT top(power, 5) FROM energy WHERE ${range()} LIMIT 3`,
  ]) add(q);

  // no lower time bound: every form answers over all stored data
  kind = 'no-lower-bound';
  const upper = () => pick(['', ` AND time < ${t(MINUTES * 60 + 60)}`, ' AND time < now()', ` AND time <= ${t(3000)}`]);
  const where = (cond: string) => {
    const u = upper();
    const c = cond + u;
    return c === '' ? '' : ` WHERE ${c.replace(/^ AND /, '')}`;
  };
  {
    add(`SELECT count(power), mean(power), max(count) FROM energy${where(pick(['', "\"nodeId\" = 'n1'", "phase = 'L2'"]))}`);
    add(`SELECT first(power), last(state) FROM energy${where(pick(['', "\"nodeId\" = 'n2'"]))}`);
    add(`SELECT power, state FROM energy${where("\"nodeId\" = 'n1'")} LIMIT ${pick([3, 7])}`);
    add(`SELECT power FROM energy${where("\"nodeId\" = 'n3'")} ORDER BY time DESC LIMIT 4`);
    add(`SELECT * FROM battery${where('')} LIMIT 5`);
    add(`SELECT count(*) FROM energy${where(pick(['', "\"nodeId\" = 'n3'"]))} GROUP BY "nodeId"`);
    add(`SELECT top(power, 2) FROM energy${where(pick(['', "\"nodeId\" = 'n1'"]))}`);
    add(`SELECT max(power), volts FROM energy${where('')}`);
    add(`SELECT difference(power) FROM energy${where("\"nodeId\" = 'n3'")} LIMIT 5`);
    add(`SELECT integral(soc, 1m) FROM battery${where('')}`);
    add(`SELECT mean(power) FROM energy${where(pick(['', "\"nodeId\" = 'n1'"]))} GROUP BY time(30m)`);
    add(`SELECT count(state) FROM energy${where('')} GROUP BY time(30m) fill(none)`);
    add(`SELECT percentile(power, 90) FROM energy${where('')}`);
    add(`SELECT distinct(mode) FROM battery${where('')}`);
    add(`SELECT derivative(mean(soc), 1m), elapsed(mean(soc), 1m) FROM battery${where('')} GROUP BY time(10m)`);
    add(`SELECT mode(mode), count(distinct(mode)), spread(soc) FROM battery${where('')}`);
    add(`SELECT cumulative_sum(soc), moving_average(soc, 3) FROM battery${where('')} LIMIT 6`);
    add(`SELECT * FROM energy${where("\"nodeId\" = 'n2'")} GROUP BY * ORDER BY time DESC LIMIT 2`);
    add(`SELECT last(soc), charging FROM battery${where('')} GROUP BY time(20m) fill(previous) tz('Europe/Brussels')`);
  }

  // raw selects
  kind = 'raw';
  for (let i = 0; i < 10; i++) {
    add(`SELECT power, volts FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()} LIMIT ${pick([5, 10, 20])} OFFSET ${pick([0, 3])}`);
    add(`SELECT power FROM energy WHERE ${pick(['power > 300', 'count < 10', 'power > 100 AND count >= 50', '(volts <= 226 OR power < 0)'])} AND "nodeId" = 'n1' AND ${range()}`);
    add(`SELECT power * 2 + volts, count / 4, count % 7 FROM energy WHERE "nodeId" = 'n2' AND ${range()} LIMIT 10`);
    add(`SELECT power, state, ok, freq FROM energy WHERE ${pick(tagFilters)}${short()} LIMIT 12`);
  }
  add(`SELECT "power"::field, "phase"::tag FROM energy WHERE "nodeId" = 'n1' AND ${range()} LIMIT 10`);
  add(`SELECT temp, humidity FROM weather WHERE ${full}`);
  add(`SELECT power FROM energy WHERE ${full} GROUP BY "nodeId" LIMIT 3 SLIMIT 2`);
  add(`SELECT soc, mode, charging FROM battery WHERE ${short()}`);

  // transformations and integral() newest first (ORDER BY time DESC)
  kind = 'desc-transformation';
  for (const fn of ['derivative', 'non_negative_derivative', 'difference', 'non_negative_difference', 'cumulative_sum', 'elapsed', 'moving_average']) {
    const arg = () => (fn === 'moving_average' ? `, ${pick([2, 3])}` : fn === 'derivative' || fn === 'non_negative_derivative' || fn === 'elapsed' ? pick(['', ', 1s', ', 1m']) : '');
    add(`SELECT ${fn}(${pick(['mean', 'max', 'last', 'count', 'sum'])}(${pick(['power', 'count'])})${arg()}) FROM energy WHERE ${pick(tagFilters)}${range()} GROUP BY time(${pick(['1m', '2m', '5m'])})${pick(['', ', "nodeId"'])} fill(${pick(['null', 'none', 'previous', '0', 'linear'])}) ORDER BY time DESC${pick(['', ' LIMIT 5', ' LIMIT 3 OFFSET 2'])}`);
    add(`SELECT ${fn}(${pick(['mean', 'min', 'first'])}(power)${arg()}) FROM energy WHERE "nodeId" = 'n2' AND ${full} GROUP BY time(${pick(['2m', '3m'])}) ORDER BY time DESC`);
    add(`SELECT ${fn}(${pick(['power', 'count'])}${arg()}) FROM energy WHERE ${oneSeries()} AND ${short()} ORDER BY time DESC${pick(['', ' LIMIT 4'])}`);
  }
  // beside an aggregate: every window of the range answers, and fill() stands for the transformation's missing values
  for (let i = 0; i < 4; i++) {
    add(`SELECT ${pick(['derivative', 'difference', 'non_negative_difference', 'moving_average'])}(${pick(['mean', 'max'])}(${pick(['power', 'count'])})${pick(['', ', 2'])}), max(count) FROM energy WHERE ${pick(["\"nodeId\" = 'n2' AND ", "\"nodeId\" = 'n3' AND ", ''])}${range()} GROUP BY time(${pick(['1m', '2m'])})${pick(['', ', "nodeId"'])} fill(${pick(['null', 'none', '0', 'previous', '-3.5'])})${pick(['', ' ORDER BY time DESC'])}${pick(['', ' LIMIT 6', ' LIMIT 4 OFFSET 2'])}`.replace(/(derivative|difference)\((\w+)\((\w+)\), 2\)/, '$1($2($3))'));
  }
  // integral() of one series newest first (several series: docs/influxdb.md, known differences)
  for (let i = 0; i < 4; i++) {
    add(`SELECT integral(${pick(['power', 'count'])}${pick(['', ', 1m', ', 10s'])}) FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()} GROUP BY time(${pick(['1m', '2m', '7m'])}) ORDER BY time DESC`);
    add(`SELECT integral(${pick(['power', 'count'])}${pick(['', ', 1m'])}) FROM energy WHERE "nodeId" = '${pick(NODES)}' AND ${range()}${pick(['', ' ORDER BY time DESC'])}`);
  }
  add(`SELECT integral(power, 1m) FROM energy WHERE ${range()} GROUP BY time(${pick(['2m', '5m'])}) ORDER BY time DESC`);
  add(`SELECT integral(soc, 1m) FROM battery WHERE ${range()} GROUP BY time(10m) ORDER BY time DESC`);

  // top() and bottom() under LIMIT and OFFSET, oldest and newest first
  kind = 'top-limit';
  for (let i = 0; i < 12; i++) {
    const n = pick([1, 2, 3]);
    const limit = n + pick([0, 1, 2, 4]);
    add(`SELECT ${pick(['top', 'bottom'])}(${pick(['power', 'count', 'volts'])}, ${n})${pick(['', ', volts', ', state'])} FROM energy WHERE ${pick([...tagFilters, 'count > 40 AND '])}${range()}${pick(['', ' GROUP BY time(2m)', ' GROUP BY time(5m), "nodeId"', ' GROUP BY phase'])}${pick(['', ' ORDER BY time DESC'])} LIMIT ${limit}${pick(['', ' OFFSET 1', ' OFFSET 3'])}`);
  }
  for (let i = 0; i < 3; i++) {
    add(`SELECT top(power, "nodeId", ${pick([1, 2])}) FROM energy WHERE ${range()} GROUP BY time(${pick(['2m', '5m'])})${pick(['', ' ORDER BY time DESC'])} LIMIT ${pick([3, 5])}`);
    add(`SELECT ${pick(['top', 'bottom'])}(power, ${pick([2, 3])}) FROM energy WHERE ${pick(tagFilters)}${range()} GROUP BY time(${pick(['1m', '5m'])}) ORDER BY time DESC`);
  }

  // operators over string, boolean and tag operands: InfluxDB's type errors, and the combinations that stand
  kind = 'type-error';
  for (let i = 0; i < 10; i++) {
    // (no mode() here: its ties over many points follow Go's sort, docs/influxdb.md)
    const sel = () => `${pick(['first', 'last', 'min', 'max', 'count', 'distinct'])}(${pick(['state', 'ok', 'power', 'count'])})`;
    // (InfluxDB's parser refuses a minus before distinct, a keyword)
    add(`SELECT ${pick([sel(), '-' + sel().replace(/^distinct/, 'last'), `(${sel()} ${pick(['+', '-'])} 1.5)`])} ${pick(['+', '*', '-', '/', '&', '|'])} ${pick(['1', '2.5', sel(), "'x'", 'true'])} FROM energy WHERE ${pick(tagFilters)}${range()}${pick(['', ' GROUP BY time(5m)', ' GROUP BY "nodeId"'])}`);
  }
  for (const q of [
    `SELECT state + 1 FROM energy WHERE ${oneSeries()} AND ${short()}`,
    `SELECT ok * 2, power FROM energy WHERE ${oneSeries()} AND ${short()}`,
    `SELECT phase + 1 FROM energy WHERE ${short()}`,
    `SELECT power * 2 + count FROM energy WHERE ${oneSeries()} AND ${short()}`,
    `SELECT last(mode) + 1 FROM battery, energy WHERE ${range()}`,
    `SELECT last(charging) | first(charging), last(soc) - first(soc) FROM battery WHERE ${range()} GROUP BY time(10m)`,
    `SELECT last(nosuch) + 1 FROM energy WHERE ${range()}`,
    `SELECT mode(${pick(['state', 'ok'])}) ${pick(['+', '*'])} 1 FROM energy WHERE ${range()}`,
    // comparisons and logic belong to WHERE; no sign before distinct (InfluxDB's parse errors)
    `SELECT last(ok) ${pick(['AND', 'OR', '=', '!='])} true FROM energy WHERE ${range()}`,
    `SELECT power ${pick(['>', '<=', '='])} 100 FROM energy WHERE ${oneSeries()} AND ${short()}`,
    `SELECT -distinct(count) FROM energy WHERE ${range()}`,
    `SELECT ${pick(['difference', 'derivative', 'non_negative_difference', 'cumulative_sum'])}(last(${pick(['state', 'ok'])})) FROM energy WHERE ${range()} GROUP BY time(1m)`,
    `SELECT moving_average(first(state), 2) FROM energy WHERE ${range()} GROUP BY time(1m)`,
    `SELECT elapsed(last(ok)) FROM energy WHERE "nodeId" = 'n1' AND ${range()} GROUP BY time(1m)`,
  ]) add(q);

  // distinct() newest first
  kind = 'distinct-desc';
  for (let i = 0; i < 8; i++) {
    add(`SELECT distinct(${pick(['state', 'ok', 'count', 'mode'])}) FROM ${pick(['energy', 'energy', 'battery'])} WHERE ${range()}${pick(['', ' GROUP BY time(2m)', ' GROUP BY time(10m), "nodeId"', ' GROUP BY "nodeId"'])} ORDER BY time DESC${pick(['', ' LIMIT 3', ' LIMIT 5 OFFSET 2'])}`);
  }
  add(`SELECT count(distinct(state)) FROM energy WHERE ${range()} GROUP BY time(5m) ORDER BY time DESC`);
  add(`SELECT distinct(count) FROM energy WHERE ${oneSeries()} AND ${short()} GROUP BY time(1m) ORDER BY time DESC`);

  // from their own generator, so that the statements before and after stay those of earlier corpora
  {
    const r2 = rng(seed + 1000);
    const pick2 = <T>(list: readonly T[]): T => list[Math.floor(r2() * list.length)];
    const range2 = () => {
      const from = Math.floor(r2() * 40) * 60;
      return `time >= ${t(from)} AND time < ${t(from + (10 + Math.floor(r2() * 50)) * 60)}`;
    };
    kind = 'fill';
    add(`SELECT max(level), min(level) FROM gauge WHERE time >= ${t(0)} AND time < ${t(1800)} GROUP BY time(${pick2(['30s', '1m', '2m'])}) fill(linear)`);
    add(`SELECT last(level), sum(level) FROM gauge WHERE time >= ${t(0)} AND time < ${t(1800)} GROUP BY time(${pick2(['30s', '1m', '2m'])}) fill(linear) ORDER BY time DESC`);
    // a selector named twice is one selector (InfluxDB reads each distinct call once): the selected point's time
    kind = 'selected-time';
    const ok = `${pick2(['first', 'last'])}(ok)`;
    add(`SELECT ${ok} ${pick2(['^', '&', '|'])} ${ok} FROM energy WHERE ${pick2(tagFilters)}${range2()}`);
    const num = `${pick2(['first', 'last', 'min', 'max'])}(${pick2(['power', 'count'])})`;
    add(`SELECT ${num} ${pick2(['+', '-', '*'])} ${num} FROM energy WHERE ${pick2(tagFilters)}${range2()}${pick2(['', ' GROUP BY "nodeId"', ' GROUP BY time(5m)', ' GROUP BY time(5m) fill(0)'])}`);
    const twice = `${pick2(['max', 'min', 'last'])}(power)`;
    add(`SELECT ${twice}, ${twice} FROM energy WHERE ${pick2(tagFilters)}${range2()}`);
    add(`SELECT last(power) + last(power), last(power) * 3, percentile(count, 50) - percentile(count, ${pick2([50, 90])}) FROM energy WHERE ${range2()}`);
    add(`SELECT percentile(power, ${pick2([10, 50])}) / 2 + percentile(power, ${pick2([10, 50])}) FROM energy WHERE "nodeId" = 'n2' AND ${range2()}`);
    add(`SELECT ${pick2(['first', 'last'])}(ok) ^ last(ok), last(power) FROM energy WHERE ${range2()}`);
    add(`SELECT max(count) + max(count) FROM energy WHERE "nodeId" = 'n2' AND ${full} GROUP BY time(${pick2(['1m', '2m'])}) fill(${pick2(['linear', 'previous', 'null'])})`);
    // beside a field or tag it is refused, as InfluxDB counts the calls before it merges them
    add(`SELECT ${pick2(['max', 'last'])}(power) ${pick2(['+', '*'])} ${pick2(['max', 'last'])}(power), ${pick2(['volts', 'phase'])} FROM energy WHERE ${range2()}`);
  }

  kind = 'epoch';
  for (const epoch of ['ns', 'u', 'ms', 's', 'm', 'h']) {
    add(`SELECT power FROM energy WHERE "nodeId" = 'n1' AND ${range()} LIMIT 3`, epoch);
    add(`SELECT mean(power) FROM energy WHERE ${range()} GROUP BY time(5m)`, epoch);
    add(`SELECT max(power) FROM energy WHERE "nodeId" = 'n2' AND ${range()}`, epoch);
  }

  // top up with random grouped aggregates until the corpus is large enough
  kind = 'aggregate';
  while (out.length < min) {
    add(`SELECT ${pick(fns)}(${pick(['power', 'count', 'volts'])}) FROM energy WHERE ${pick(tagFilters)}${range()} GROUP BY time(${pick(['1m', '4m', '6m'])})${pick(['', ', "nodeId"', ', phase'])} fill(${pick(['null', 'none', '0', 'previous', 'linear'])})${pick(['', ' ORDER BY time DESC', ' LIMIT 4', ' LIMIT 3 OFFSET 2'])}`);
  }
  return out;
}
