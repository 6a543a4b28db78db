// Inputs for the codecs' property tests: random values mixed with the adversarial ones (extremes, runs, alternation,
// regular steps with jumps), as typed arrays the way a block holds them.
import fc from 'fast-check';
import type { BlockData } from '../../../src/telemetry/blocks/index.ts';
import { columnFromValues } from '../../../src/telemetry/blocks/values.ts';
import type { FieldKind } from '../../../src/telemetry/line-scanner.ts';

export const MAX_SAFE = Number.MAX_SAFE_INTEGER;
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** fast-check settings: seeded, so a failure is reproduced by running the test again */
export const SEEDED = { seed: 38, numRuns: 300 } as const;

/** Arrays of length 0..max built from one element arbitrary, in the shapes that stress codecs. */
export function shaped<T>(element: fc.Arbitrary<T>, max = 400): fc.Arbitrary<T[]> {
  return fc.oneof(
    fc.array(element, { maxLength: max }),
    fc.tuple(element, fc.integer({ min: 0, max: max * 4 })).map(([v, n]) => Array<T>(n).fill(v)),
    fc.tuple(element, element, fc.integer({ min: 0, max })).map(([a, b, n]) => Array.from({ length: n }, (_, i) => (i % 2 ? a : b))),
    fc.array(fc.tuple(element, fc.integer({ min: 1, max: 300 })), { maxLength: 12 })
      .map((runs) => runs.flatMap(([v, n]) => Array<T>(n).fill(v))),
  );
}

const safeExtremes = fc.constantFrom(0, 1, -1, MAX_SAFE, -MAX_SAFE, 2 ** 32, -(2 ** 32), 2 ** 31 - 1, -(2 ** 31), 2 ** 52, -(2 ** 52));

/** Safe integers: small, large and extreme. */
export const safeInt = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.maxSafeInteger(),
  safeExtremes,
);

/** Safe integer sequences: shaped, and counters/clocks (start + steps with jitter and jumps). */
export const safeInts: fc.Arbitrary<Float64Array> = fc.oneof(
  shaped(safeInt),
  fc.tuple(
    fc.integer({ min: -(2 ** 50), max: 2 ** 50 }),
    fc.integer({ min: 0, max: 100_000 }),
    fc.array(fc.oneof(
      { arbitrary: fc.constant(0), weight: 8 },
      { arbitrary: fc.integer({ min: -3, max: 3 }), weight: 2 },
      { arbitrary: fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), weight: 1 },
    ), { maxLength: 700 }),
  ).map(([start, step, jitter]) => {
    let t = start;
    return jitter.map((j) => (t += step + j));
  }),
).map((a) => Float64Array.from(a));

/** Any int64: extremes included. */
export const int64 = fc.oneof(
  fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
  fc.constantFrom(INT64_MIN, INT64_MAX, INT64_MIN + 1n, 0n, -1n, 2n ** 53n, -(2n ** 53n), 2n ** 53n - 1n, 2n ** 53n + 1n),
  safeInt.map(BigInt),
);
export const int64s: fc.Arbitrary<BigInt64Array> = shaped(int64).map((a) => BigInt64Array.from(a));

/** Every finite double the codec must keep to the bit, and the short decimals it must keep small. */
export const anyDouble = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 0, Number.MIN_VALUE, -Number.MIN_VALUE, Number.MAX_VALUE, -Number.MAX_VALUE, 2.2250738585072014e-308,
    2.225073858507201e-308, 0.1 + 0.2, 1e300, -1e-300, Number.EPSILON, MAX_SAFE, 2 ** 53 + 2, 1 / 3, Math.PI),
  fc.integer({ min: -100_000_000, max: 100_000_000 }).chain((k) => fc.integer({ min: 0, max: 6 }).map((e) => k / 10 ** e)),
);

/** Decimals as a meter writes them: k / 10^e with a fixed e per array. */
export const decimals: fc.Arbitrary<Float64Array> = fc.tuple(fc.integer({ min: 0, max: 4 }), fc.array(fc.integer({ min: -10_000_000, max: 10_000_000 }), { maxLength: 600 }))
  .map(([e, ks]) => Float64Array.from(ks, (k) => Number((k / 10 ** e).toFixed(e))));

export const isBlockFormatError = (err: unknown): boolean => err instanceof Error && err.name === 'BlockFormatError';

/** The bytes of a Float64Array: equal bytes mean equal to the bit (-0, NaN payloads). */
export const bitsOf = (a: Float64Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Doubles no parser produces: NaN with payloads, infinities. */
export const oddDoubles = (): Float64Array => {
  const a = Float64Array.of(NaN, Infinity, -Infinity, 0, 0);
  const words = new Uint32Array(a.buffer);
  words[6] = 0x12345; // low word first on little-endian machines: a NaN with a payload either way
  words[7] = 0x7ff80000;
  words[8] = 1;
  words[9] = 0xfff00000;
  return a;
};

/** Values of each field kind (0 float .. 4 boolean) */
const KIND_VALUES: ReadonlyArray<fc.Arbitrary<number | bigint | string | boolean>> = [
  anyDouble,
  fc.oneof(safeInt, int64),
  fc.oneof(fc.nat(), fc.bigInt({ min: 0n, max: INT64_MAX })),
  fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom('on', 'off', '')),
  fc.boolean(),
];

/** A field's values by row as the query layer holds them (null: missing), for each kind (0 float .. 4 boolean). */
export function rowValues(kind: 0 | 1 | 2 | 3 | 4, max = 300): fc.Arbitrary<Array<number | bigint | string | boolean | null>> {
  const value = KIND_VALUES[kind];
  const missing = fc.oneof(
    { arbitrary: fc.constant(0), weight: 2 },
    { arbitrary: fc.constant(0.1), weight: 1 },
    { arbitrary: fc.constant(0.9), weight: 1 },
    { arbitrary: fc.constant(1), weight: 1 },
  );
  return fc.tuple(shaped(value, max), missing, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: max * 4, maxLength: max * 4 }))
    .map(([values, p, dice]) => values.map((v, i) => ((dice[i % dice.length] ?? 0) < p ? null : v)));
}

/** A block of n rows: increasing (ms, sub), up to 7 field slots, each absent or a column with some values missing */
export const blocks: fc.Arbitrary<BlockData> = fc.integer({ min: 0, max: 400 }).chain((n) => fc.record({
  start: fc.integer({ min: -(2 ** 50), max: 2 ** 50 }),
  steps: fc.array(fc.oneof({ arbitrary: fc.constant(10_000), weight: 5 }, { arbitrary: fc.nat({ max: 2 ** 30 }), weight: 1 }), { minLength: n, maxLength: n }),
  subs: fc.oneof(fc.constant(undefined), fc.array(fc.integer({ min: 0, max: 999_999 }), { minLength: n, maxLength: n })),
  slots: fc.array(fc.option(fc.integer({ min: 0, max: 4 }).chain((kind) => fc.tuple(
    fc.constant(kind as FieldKind),
    fc.array(fc.option(KIND_VALUES[kind], { freq: 4, nil: null }), { minLength: n, maxLength: n }),
  )), { freq: 4, nil: undefined }), { maxLength: 7 }),
}).map(({ start, steps, subs, slots }) => {
  let t = start;
  // a step of 0 needs a larger sub-ms value than the row before: rows are strictly increasing
  const ms = Float64Array.from(steps, (s, i) => (t += i > 0 && s === 0 && (!subs || subs[i] <= subs[i - 1]) ? 1 : s));
  return {
    ms,
    sub: subs ? Int32Array.from(subs) : new Int32Array(n),
    columns: slots.map((slot) => (slot ? columnFromValues(slot[0], slot[1]) : undefined)),
  };
}));
