// The history benchmarks' data set (issue 38): `days` days of `devices` home energy systems, one point every
// `stepMs`, measurement `power` with tag nodeId and six fields:
//   grid     W, float, 0.1 resolution: import (+) or export (-) at the meter, what the battery did not cover
//   solar    W, float, 0.1 resolution: exactly 0 at night (and below the inverter's 2 W threshold)
//   battery  W, float, 0.1 resolution: charging (+) or discharging (-), exactly 0 when idle
//   soc      %, float, 0.1 resolution: the battery's state of charge, moving slowly
//   energy   Wh, integer: the household's consumption counter, monotonic
//   state    integer: the inverter's state (0 standby, 1 producing, 2 derating, 3 fault), changing a few times a day
// Each device has its own panels, battery, household load (a slowly wandering base, a fridge cycling, appliances
// switched on at the hours people use them) and meter noise; the weather of a day is shared by all devices, with
// clouds passing each one. Deterministic: the same options give the same values, whichever way they are read.
//
// historyDataset(options) gives:
//   batches(lines)   line-protocol text in batches of `lines` lines, time-major (every device at a time, then the next
//                    time), nanosecond timestamps, as devices report to POST /write
//   seriesColumns()  per device and window (`windowMs`, default a day): { nodeId, ms: Float64Array, values: { field:
//                    Float64Array } }, the columns a block of that series and window holds
import { mulberry32 } from '../../test/support/random.mjs';
export const HISTORY_FIELDS = [
  { name: 'grid', kind: 'float' },
  { name: 'solar', kind: 'float' },
  { name: 'battery', kind: 'float' },
  { name: 'soc', kind: 'float' },
  { name: 'energy', kind: 'integer' },
  { name: 'state', kind: 'integer' },
];

const DAY = 86_400_000;

const random = mulberry32;

function gauss(rand) {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

const tenths = (w) => Math.round(w * 10) / 10;

/** The weather of day `day`: how cloudy (0 clear .. 1 overcast) and how changeable, the same for every device. */
function weather(seed, day) {
  const rand = random(seed * 7919 + day * 104_729);
  const cloudy = rand() ** 1.5;
  return { cloudy, changeable: 0.005 + 0.06 * rand() * (1 - Math.abs(2 * cloudy - 1)) };
}

/** One device's simulation, stepped one point at a time: next(t) gives the six field values at time t. */
function device(seed, d, stepMs) {
  const rand = random(seed * 1_000_003 + d * 7_777_777 + 1);
  const hours = stepMs / 3_600_000;
  const peak = 4000 + 5000 * rand();
  const capacityWh = 5000 + 10_000 * rand();
  const maxBattery = 2500 + 2500 * rand();
  let base = 150 + 250 * rand();
  let soc = 30 + 40 * rand();
  let energyWh = 1_000_000 + Math.floor(5_000_000 * rand());
  let cloud = 1;
  let fridgeAt = Math.floor(rand() * 45);
  let appliance = 0;
  let applianceLeft = 0;
  let batteryW = 0;
  let state = 0;
  let eventLeft = 0;
  let day = -1;
  let sky = { cloudy: 0, changeable: 0 };
  return (t) => {
    const dayOf = Math.floor(t / DAY);
    if (dayOf !== day) {
      day = dayOf;
      sky = weather(seed, day);
    }
    const hour = (t - dayOf * DAY) / 3_600_000;
    // solar: a clear-sky arc from sunrise to sunset, times clouds passing, times a little measurement noise
    const sunrise = 6.5 + 0.6 * Math.sin(day / 58);
    const sunset = 18.5 - 0.6 * Math.sin(day / 58);
    const arc = hour > sunrise && hour < sunset ? Math.sin((Math.PI * (hour - sunrise)) / (sunset - sunrise)) ** 1.3 : 0;
    const target = 1 - 0.85 * sky.cloudy;
    cloud = Math.min(1.05, Math.max(0.08, cloud + 0.05 * (target - cloud) + sky.changeable * gauss(rand)));
    let solar = arc > 0 ? tenths(peak * arc * cloud * (1 + 0.002 * gauss(rand))) : 0;
    if (solar < 2) solar = 0;
    // load: a wandering base, the fridge (15 min on in 45), appliances more likely in the morning and evening
    base = Math.min(450, Math.max(120, base + 0.4 * gauss(rand)));
    fridgeAt = (fridgeAt + hours * 60) % 45;
    if (applianceLeft > 0) applianceLeft -= stepMs;
    else {
      appliance = 0;
      const busy = (hour > 6.5 && hour < 9) || (hour > 17 && hour < 22) ? 0.004 : 0.0008;
      if (rand() < busy) {
        appliance = 800 + 2200 * rand();
        applianceLeft = (2 + 28 * rand()) * 60_000;
      }
    }
    const load = base + (fridgeAt < 15 ? 110 : 0) + appliance + 3 * gauss(rand);
    // battery: covers the surplus or the shortfall of the step before (a controller reacts, it does not foresee)
    const surplus = solar - load;
    let want = 0;
    if (surplus > 20 && soc < 95) want = Math.min(surplus, maxBattery);
    else if (surplus < -20 && soc > 10) want = Math.max(surplus, -maxBattery);
    const battery = want === 0 ? 0 : tenths(batteryW + 2 * gauss(rand));
    batteryW = want;
    soc = Math.min(100, Math.max(0, soc + (battery * hours * (battery > 0 ? 0.95 : 1 / 0.95) * 100) / capacityWh));
    const grid = tenths(load - solar + battery + gauss(rand));
    energyWh += Math.max(0, load) * hours;
    // the inverter: standby at night, producing by day, derating on some hot middays, rarely a fault
    if (eventLeft > 0) eventLeft -= stepMs;
    else if (solar === 0) state = 0;
    else {
      state = 1;
      if (solar > 0.8 * peak && rand() < 0.0006) {
        state = 2;
        eventLeft = (30 + 60 * rand()) * 60_000;
      } else if (rand() < 0.00002) {
        state = 3;
        eventLeft = 10 * 60_000;
      }
    }
    return [grid, solar, battery, tenths(soc), Math.floor(energyWh), state];
  };
}

export function historyDataset({ devices = 20, days = 30, stepMs = 10_000, startMs = Date.UTC(2026, 0, 1), seed = 38 } = {}) {
  const nodeId = (d) => `node-${String(d).padStart(3, '0')}`;
  const steps = Math.floor((days * DAY) / stepMs);
  const endMs = startMs + steps * stepMs;

  /** Line-protocol text, `lines` lines a batch (a multiple of `devices`), every device at each time in turn. */
  function* batches(lines = 5000) {
    const sims = Array.from({ length: devices }, (_, d) => device(seed, d, stepMs));
    let out = [];
    for (let i = 0; i < steps; i++) {
      const t = startMs + i * stepMs;
      for (let d = 0; d < devices; d++) {
        const [grid, solar, battery, soc, energy, state] = sims[d](t);
        out.push(`power,nodeId=${nodeId(d)} grid=${grid},solar=${solar},battery=${battery},soc=${soc},energy=${energy}i,state=${state}i ${t}000000`);
      }
      if (out.length >= lines) {
        yield `${out.join('\n')}\n`;
        out = [];
      }
    }
    if (out.length > 0) yield `${out.join('\n')}\n`;
  }

  /** Per device and window: the times and each field's values (all present). */
  function* seriesColumns({ windowMs = DAY } = {}) {
    if (windowMs % stepMs !== 0) throw new RangeError('a window is a whole number of steps');
    for (let d = 0; d < devices; d++) {
      const sim = device(seed, d, stepMs);
      for (let w = startMs; w < endMs; w += windowMs) {
        const n = Math.ceil((Math.min(w + windowMs, endMs) - w) / stepMs);
        const ms = new Float64Array(n);
        const values = Object.fromEntries(HISTORY_FIELDS.map((f) => [f.name, new Float64Array(n)]));
        for (let i = 0; i < n; i++) {
          ms[i] = w + i * stepMs;
          const row = sim(ms[i]);
          HISTORY_FIELDS.forEach((f, k) => { values[f.name][i] = row[k]; });
        }
        yield { nodeId: nodeId(d), ms, values };
      }
    }
  }

  return { measurement: 'power', fields: HISTORY_FIELDS, nodeId, startMs, endMs, points: steps * devices, batches, seriesColumns };
}
