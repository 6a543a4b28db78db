import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dottedPath, nodeTypeJsonSchema, nodeTypes, validateProperties } from '../../src/devices/node-types.ts';

const common = {
  nodeId: 'site-1/device-7',
  isActive: true,
  name: 'Roof east',
  info: { manufacturer: 'Acme', model: 'X1', serialNumber: 'SN-1', vendorSpecific: { anything: [1, 2] } },
  nodeParentsIds: ['site-1'],
  nodeChildrenIds: [],
  nodeInfluxSeries: [{ measurement: 'metrics', database: 'db', retentionPolicy: 'rp_one_s', tags: { nodeId: 'site-1/device-7' }, fields: ['power'], extra: true }],
  freeForm: { notInAnySchema: 1 },
};

// a fully filled valid device and one type-specific violation (property, bad value, exact message) per nodeType
const cases: Record<string, { valid: Record<string, unknown>; bad: [string, unknown, string] }> = {
  smartgridController: {
    valid: { timezone: 'Europe/Brussels', gridConnectionMaxPowerW: 17000, softwareVersion: '1.2.3' },
    bad: ['gridConnectionMaxPowerW', -5, 'Invalid value: Expected >=0 but received -5'],
  },
  powerMeter: {
    valid: { meterType: 'grid', phases: 3, ctRatio: 40 },
    bad: ['meterType', 'gas', 'Invalid type: Expected ("grid" | "production" | "consumption" | "submeter") but received "gas"'],
  },
  solarInverter: {
    valid: { nominalPowerW: 5000, peakPowerWp: 6400, mpptCount: 2, phases: 1 },
    bad: ['mpptCount', 1.5, 'Invalid integer: Received 1.5'],
  },
  battery: {
    valid: { capacityWh: 10000, maxChargePowerW: 5000, maxDischargePowerW: 5000, minSocPct: 10, maxSocPct: 95 },
    bad: ['maxSocPct', 101, 'Invalid value: Expected <=100 but received 101'],
  },
  evCharger: {
    valid: { maxCurrentA: 32, minCurrentA: 6, phases: 3, connectorType: 'type2' },
    bad: ['phases', 2, 'Invalid type: Expected (1 | 3) but received 2'],
  },
  hybridInverter: {
    valid: { nominalPowerW: 8000, batteryCapacityWh: 12000, maxChargePowerW: 4000, maxDischargePowerW: 4000, phases: 3 },
    bad: ['batteryCapacityWh', '12 kWh', 'Invalid type: Expected number but received "12 kWh"'],
  },
  heatPump: {
    valid: { heatPumpType: 'airToWater', thermalPowerW: 9000, electricalPowerW: 2500 },
    bad: ['thermalPowerW', null, 'Invalid type: Expected number but received null'],
  },
};

describe('node types: registry', () => {
  it('lists the seven built-in node types', () => {
    assert.deepEqual(nodeTypes(), ['smartgridController', 'powerMeter', 'solarInverter', 'battery', 'evCharger', 'hybridInverter', 'heatPump']);
    assert.deepEqual(Object.keys(cases).sort(), nodeTypes().sort());
  });
});

describe('node types: happy', () => {
  for (const [nodeType, { valid }] of Object.entries(cases)) {
    it(`${nodeType}: a fully filled device with free-form extras is valid`, () => {
      assert.deepEqual(validateProperties({ ...common, ...valid, nodeType }), { ok: true });
    });
    it(`${nodeType}: only nodeType is required`, () => {
      assert.deepEqual(validateProperties({ nodeType }), { ok: true });
    });
  }

  it('passes devices whose nodeType has no schema, is missing or is not a string', () => {
    assert.deepEqual(validateProperties({ nodeType: 'windTurbine', capacityWh: 'lots' }), { ok: true });
    assert.deepEqual(validateProperties({ capacityWh: -1 }), { ok: true });
    assert.deepEqual(validateProperties({ nodeType: 7 }), { ok: true });
    assert.deepEqual(validateProperties({}), { ok: true });
  });

  it('does not find inherited members as schemas', () => {
    for (const nodeType of ['toString', '__proto__', 'constructor', 'hasOwnProperty']) {
      assert.deepEqual(validateProperties({ nodeType }), { ok: true });
      assert.equal(nodeTypeJsonSchema(nodeType), undefined);
    }
  });
});

describe('node types: validation', () => {
  for (const [nodeType, { bad: [key, value, message] }] of Object.entries(cases)) {
    it(`${nodeType}: a wrong ${key} names the property`, () => {
      assert.deepEqual(validateProperties({ nodeType, [key]: value }), { ok: false, path: key, message });
    });
    it(`${nodeType}: well-known properties are checked too`, () => {
      assert.deepEqual(validateProperties({ nodeType, isActive: 'yes' }), {
        ok: false, path: 'isActive', message: 'Invalid type: Expected boolean but received "yes"',
      });
    });
  }

  it('reports nested and array paths', () => {
    assert.deepEqual(validateProperties({ nodeType: 'battery', info: { serialNumber: 5 } }), {
      ok: false, path: 'info.serialNumber', message: 'Invalid type: Expected string but received 5',
    });
    assert.deepEqual(validateProperties({ nodeType: 'battery', nodeParentsIds: ['a', 'b', 3] }), {
      ok: false, path: 'nodeParentsIds[2]', message: 'Invalid type: Expected string but received 3',
    });
    assert.deepEqual(validateProperties({ nodeType: 'powerMeter', nodeInfluxSeries: [{ measurement: 'm' }, { database: 'd' }] }), {
      ok: false, path: 'nodeInfluxSeries[1].measurement', message: 'Invalid key: Expected "measurement" but received undefined',
    });
    assert.deepEqual(validateProperties({ nodeType: 'powerMeter', nodeInfluxSeries: [{ measurement: 'm', tags: { 'site id': 4 } }] }), {
      ok: false, path: 'nodeInfluxSeries[0].tags["site id"]', message: 'Invalid type: Expected string but received 4',
    });
  });

  it('bounds nodeId to 1..200 characters', () => {
    assert.deepEqual(validateProperties({ nodeType: 'heatPump', nodeId: 'x'.repeat(200) }), { ok: true });
    assert.deepEqual(validateProperties({ nodeType: 'heatPump', nodeId: '' }), {
      ok: false, path: 'nodeId', message: 'Invalid length: Expected >=1 but received 0',
    });
    assert.deepEqual(validateProperties({ nodeType: 'heatPump', nodeId: 'x'.repeat(201) }), {
      ok: false, path: 'nodeId', message: 'Invalid length: Expected <=200 but received 201',
    });
  });

  it('requires objects to be objects, not arrays', () => {
    assert.deepEqual(validateProperties({ nodeType: 'evCharger', info: ['Acme'] }), {
      ok: false, path: 'info', message: 'Invalid type: Expected Object but received Array',
    });
    assert.deepEqual(validateProperties({ nodeType: 'evCharger', info: 'Acme' }), {
      ok: false, path: 'info', message: 'Invalid type: Expected Object but received "Acme"',
    });
    assert.deepEqual(validateProperties({ nodeType: 'evCharger', nodeInfluxSeries: [['m']] }), {
      ok: false, path: 'nodeInfluxSeries[0]', message: 'Invalid type: Expected Object but received Array',
    });
    assert.deepEqual(validateProperties({ nodeType: 'evCharger', nodeInfluxSeries: [{ measurement: 'm', tags: ['a'] }] }), {
      ok: false, path: 'nodeInfluxSeries[0].tags', message: 'Invalid type: Expected Object but received Array',
    });
    assert.deepEqual(validateProperties(Object.assign([], { nodeType: 'battery' }) as unknown as Record<string, unknown>), {
      ok: false, path: '', message: 'Invalid type: Expected Object but received Array',
    });
  });
});

describe('node types: JSON Schema', () => {
  for (const nodeType of Object.keys(cases)) {
    it(`${nodeType}: draft 2020-12 with $id and title, only nodeType required, extras allowed`, () => {
      const schema = nodeTypeJsonSchema(nodeType) as Record<string, any>;
      assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
      assert.equal(schema.$id, `urn:gridkeeper:node-type:${nodeType}`);
      assert.equal(schema.title, nodeType);
      assert.equal(schema.type, 'object');
      assert.deepEqual(schema.required, ['nodeType']);
      assert.equal(schema.additionalProperties, undefined); // absent = any extra key is allowed
      assert.deepEqual(schema.properties.nodeType, { const: nodeType });
      assert.deepEqual(schema.properties.nodeId, { type: 'string', minLength: 1, maxLength: 200 });
      assert.deepEqual(schema.properties.nodeInfluxSeries.items.required, ['measurement']);
      const specific = Object.keys(cases[nodeType].valid);
      assert.deepEqual(Object.keys(schema.properties), [
        'nodeId', 'nodeType', 'isActive', 'name', 'info', 'nodeParentsIds', 'nodeChildrenIds', 'nodeInfluxSeries', ...specific,
      ]);
    });
  }

  it('exports type-specific constraints', () => {
    const ev = nodeTypeJsonSchema('evCharger') as Record<string, any>;
    assert.deepEqual(ev.properties.phases, { enum: [1, 3], type: 'number', description: 'Number of grid phases the device is connected to' });
    const battery = nodeTypeJsonSchema('battery') as Record<string, any>;
    assert.deepEqual(battery.properties.maxSocPct, { type: 'number', minimum: 0, maximum: 100 });
    const solar = nodeTypeJsonSchema('solarInverter') as Record<string, any>;
    assert.deepEqual(solar.properties.mpptCount, { type: 'integer', minimum: 1 });
  });

  it('returns undefined for an unknown nodeType and a fresh object per call', () => {
    assert.equal(nodeTypeJsonSchema('windTurbine'), undefined);
    const first = nodeTypeJsonSchema('battery') as Record<string, any>;
    first.title = 'changed';
    assert.equal((nodeTypeJsonSchema('battery') as Record<string, any>).title, 'battery');
  });
});

describe('node types: dottedPath', () => {
  it('renders identifiers dotted, indexes in brackets and other keys quoted', () => {
    assert.equal(dottedPath([]), '');
    assert.equal(dottedPath(['info', 'serialNumber']), 'info.serialNumber');
    assert.equal(dottedPath(['nodeParentsIds', 2]), 'nodeParentsIds[2]');
    assert.equal(dottedPath([0, 'from']), '[0].from');
    assert.equal(dottedPath(['tags', 'a.b', 'c']), 'tags["a.b"].c');
  });
});
