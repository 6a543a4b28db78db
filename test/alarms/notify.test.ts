// Alarm notifications: every transition reaches webhooks as an event of the rule's role; mails go through the real
// SMTP server on loopback to the rule's recipients in their language, with a console link, within the repeat limit.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { makeTestApp, ROOT_ROLE_ID, type TestApp } from '../support/app.ts';
import { addRole, addManages, userIn, flags } from '../roles/fixtures.ts';
import { startSmtp, type TestSmtp } from '../support/smtp.ts';
import { startReceiver } from '../events/receiver.ts';
import { alarms, createRule, meter, ruleBody, write } from './fixtures.ts';

let smtp: TestSmtp;
before(async () => { smtp = await startSmtp(); });
after(async () => { await smtp.close(); });

async function setup(t: { after(fn: () => Promise<void>): void }, env: Record<string, string> = {}): Promise<TestApp> {
  const app = await makeTestApp({ now: Date.now(), env: { GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL: 'true', GRIDKEEPER_INSTALLATION: 'site-a', ...env } });
  t.after(() => app.close());
  return app;
}

describe('alarm notifications: events', () => {
  it('raise, acknowledge and clear reach a webhook of a role that reaches the rule\'s role, signed; not one of another role', async (t) => {
    const app = await setup(t);
    const rx = await startReceiver();
    const rxOther = await startReceiver();
    t.after(async () => { await rx.close(); await rxOther.close(); });
    const site = await addRole(app, 'site');
    const other = await addRole(app, 'other');
    await addManages(app, ROOT_ROLE_ID, site, flags('alarmManagement', 'userManagement'));
    await addManages(app, ROOT_ROLE_ID, other, flags('userManagement'));
    const hook = async (roleId: number, url: string) => (await app.request('POST', `/v1/webhook?roleId=${roleId}`, { token: app.adminToken, body: { name: 'bms', url, types: ['alarm.*'] } })).body.webhook;
    const w = await hook(site, rx.url);
    await hook(other, rxOther.url);
    const m = await meter(app, site);
    await createRule(app, ruleBody(), site);
    const t0 = app.clock.now();
    await write(app, `power,nodeId=${m.nodeId} p=42.5 ${t0}`);
    await app.deps.alarms.drain();
    const [a] = await alarms(app);
    await app.request('POST', `/v1/alarm/${a.id}/ack`, { token: app.adminToken });
    await write(app, `power,nodeId=${m.nodeId} p=1 ${t0 + 1000}`);
    await app.deps.alarms.drain();
    await app.deps.events.drain();
    assert.deepEqual(rx.received.map((r) => r.json.type), ['alarm.raised', 'alarm.acknowledged', 'alarm.cleared']);
    assert.deepEqual(rxOther.received, []);
    const raised = new Webhook(w.secret).verify(rx.received[0].body, rx.received[0].headers) as any;
    assert.deepEqual(raised.subject, { kind: 'alarm', id: a.id });
    assert.deepEqual([raised.data.alarm.state, raised.data.alarm.value, raised.data.alarm.deviceId], ['active_unack', 42.5, m.id]);
    assert.deepEqual([rx.received[2].json.data.alarm.state, rx.received[2].json.data.alarm.clearedBy], ['cleared_ack', 'rule']);
  });
});

describe('alarm notifications: mail', () => {
  it('mails each recipient in its language with a console link; repeats within the interval are held back', async (t) => {
    const app = await setup(t, { GRIDKEEPER_SMTP_URL: smtp.url, GRIDKEEPER_MAIL_FROM: 'Gridkeeper <noreply@grid.example.test>', GRIDKEEPER_PUBLIC_URL: 'https://grid.example.test/' });
    const site = await addRole(app, 'site');
    await addManages(app, ROOT_ROLE_ID, site, flags('alarmManagement'));
    const m = await meter(app, site);
    const anna = await userIn(app, site);
    const rule = await createRule(app, ruleBody({
      notify: [{ userEmail: anna.email, language: 'nl-BE' }, { userEmail: 'admin@localhost', language: 'de' }], mailIntervalSeconds: 600,
    }), site);
    const t0 = app.clock.now();
    smtp.received.length = 0;
    await write(app, `power,nodeId=${m.nodeId} p=42 ${t0}`);
    await app.deps.alarms.drain();
    const mails = [await smtp.next(), await smtp.next()].sort((x, y) => x.to[0].localeCompare(y.to[0]));
    const [a] = await alarms(app);
    assert.deepEqual(mails.map((x) => x.to), [['admin@localhost'], [anna.email]]);
    assert.equal(mails[1].parsed.subject, 'Alarm gestart (ernstig): overload');
    assert.equal(mails[1].parsed.headers.get('content-language'), 'nl');
    assert.equal(mails[0].parsed.subject, 'Alarm ausgelöst (schwer): overload');
    assert.match(mails[1].parsed.text ?? '', new RegExp(`https://grid\\.example\\.test/console/alarms\\?id=${a.id}`));
    assert.match(mails[1].parsed.text ?? '', /Waarde: 42/);
    assert.equal((await app.deps.db.get(sql<{ mailed_at: number }>`SELECT mailed_at FROM alarm_states WHERE rule_id = ${rule.id}`))!.mailed_at, app.clock.now());

    // a flapping sensor: the next transitions within ten minutes are events, not mails
    await write(app, `power,nodeId=${m.nodeId} p=1 ${t0 + 1000}\npower,nodeId=${m.nodeId} p=50 ${t0 + 2000}\npower,nodeId=${m.nodeId} p=2 ${t0 + 3000}`);
    assert.equal(await app.deps.alarms.drain(), 3);
    await assert.rejects(smtp.next(300), /no mail arrived/);
    app.clock.advance(600_000);
    await write(app, `power,nodeId=${m.nodeId} p=60 ${t0 + 4000}`, await app.token(app.adminId));
    await app.deps.alarms.drain();
    const later = [await smtp.next(), await smtp.next()];
    assert.deepEqual(later.map((x) => x.to[0]).sort(), ['admin@localhost', anna.email].sort());
    assert.equal((await app.deps.db.get(sql<{ n: number }>`SELECT count(*) AS n FROM events WHERE type LIKE 'alarm.%'`))!.n, 5);
  });
});
