// The outbox: events are written in the unit of work of the change they tell of, with one pending delivery per
// subscription whose filter selects them, so a change and its event commit together or not at all. Delivery happens
// later, from the tables (dispatcher.ts), on whichever node claims it.
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/open.ts';
import type { AuditLog } from '../context/deps.ts';
import type { AuditInsert } from '../db/schema.ts';
import { eventType, type EventDraft } from './event-types.ts';
import { eventsOfAudit } from './from-audit.ts';
import { fanOut, insertEvent } from './events.store.ts';

export type { EventDraft };

/** Stored data above this size keeps only the names of what changed (a delivery's payload stays under 20 kB). */
export const MAX_DATA_BYTES = 16 * 1024;

/** The data as stored: as given, or (too large) the names of the changed fields, or nothing but the mark. */
export function boundedData(data: Record<string, unknown>): string {
  const text = JSON.stringify(data);
  if (Buffer.byteLength(text) <= MAX_DATA_BYTES) return text;
  const changes = data.changes;
  if (typeof changes === 'object' && changes !== null) {
    const names = JSON.stringify({ truncated: true, changed: Object.keys(changes) });
    if (Buffer.byteLength(names) <= MAX_DATA_BYTES) return names;
  }
  return JSON.stringify({ truncated: true });
}

/**
 * `evt_` and 16 bytes: the time in ms (6 bytes), then 80 random bits — the event's public id, the idempotency key of
 * every delivery of it. Time first, so new ids land at the end of their unique index instead of anywhere in it.
 */
export function newEventUid(now: number): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(Math.max(0, Math.min(now, 2 ** 48 - 1)), 0, 6);
  return `evt_${bytes.toString('base64url')}`;
}

/**
 * Stores the events and their pending deliveries through `tx`, the transaction handle of the change's unit of work.
 * `only`: deliver to this subscription alone (a test event, a replay) instead of fanning out.
 */
export async function writeEvents(tx: Db, drafts: readonly EventDraft[], only?: number): Promise<{ id: number; uid: string }[]> {
  if (!tx.inTransaction) throw new Error('events written outside a unit of work');
  const out: { id: number; uid: string }[] = [];
  for (const draft of drafts) {
    if (eventType(draft.type) === undefined) throw new Error(`event type ${draft.type} is not defined`);
    const uid = newEventUid(draft.at);
    const id = await insertEvent(tx, { ...draft, uid, data: boundedData(draft.data) });
    await fanOut(tx, id, draft.type, draft.at, only);
    out.push({ id, uid });
  }
  return out;
}

/**
 * The audit log with its events: each entry's events are written beside it, in the same unit of work. `written` is
 * told when a unit wrote events (the dispatcher looks for them once that unit has committed).
 */
export function withEvents(audit: AuditLog, written: () => void = () => {}): AuditLog {
  return {
    async write(tx, rows: readonly AuditInsert[]) {
      await audit.write(tx, rows);
      const drafts = rows.flatMap(eventsOfAudit);
      if (drafts.length === 0) return;
      await writeEvents(tx, drafts);
      written();
    },
  };
}
