// POST /v1/telemetry (docs/api.md#telemetry-write): one line-protocol body into one namespace, all-or-nothing, in ONE transaction
// (synchronous=FULL makes every commit an fsync, so one per request, never one per point).
//
// Each line is scanned straight into the shard writer, nothing is kept per point but its row. A line whose series
// section (measurement and tags as written) was seen before skips tag parsing and the series lookup. The distinct
// nodeIds are collected while scanning and checked together at the end, before the rows are stored and anything is
// committed: a malformed line anywhere is a 400 (which comes before a 403 in the order of checks, docs/api.md#check-order),
// an unauthorized nodeId then a 403, and either rolls the whole request back.
//
// The transaction has three steps: scanning and storing run synchronously on the connection (tx.exclusive: the hot
// loops stay free of promises), the rights check between them goes through the shared, asynchronous rules.
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { requireTelemetryWrite } from './authorize.ts';
import { catalogueOf, type Catalogue, type NamespaceInfo, type SeriesInfo, type SeriesText } from './sqlite/catalogue.ts';
import { LineProtocolError, LineScanner } from './line-protocol/line-scanner.ts';
import { writeLineProtocolPg } from './pg/pg-ingest.ts';
import { ShardWriter } from './sqlite/shard-writer.ts';
import { stagingOf } from './sqlite/staging.ts';
import { nulLine, NUL_REASON, type WriteRequest } from './line-protocol/write-request.ts';

export type { WriteRequest } from './line-protocol/write-request.ts';

/** What scanning the body left for the rest of the request: the buffered rows and the nodeIds to authorize. */
interface Scanned {
  writer: ShardWriter | undefined;
  nodeIds: Set<string>;
  stored: number;
}

let requestSeq = 0;
/** waits of a millisecond a write makes at most for a worker that is behind, before it helps (about a second) */
const MAX_WAITS = 1000;

/** Stores the body's points; returns how many were stored. Throws ApiError LINE_PROTOCOL (400) or FORBIDDEN (403). */
export async function writeLineProtocol(db: Db, req: WriteRequest): Promise<number> {
  try {
    return await (db.backend === 'postgres' ? writeLineProtocolPg(db, req) : writeSqlite(db, req));
  } catch (err) {
    if (err instanceof LineProtocolError) throw new ApiError('LINE_PROTOCOL', `${err.message}; nothing was stored`);
    throw err;
  }
}

async function writeSqlite(db: Db, req: WriteRequest): Promise<number> {
  let catalogue: Catalogue | undefined;
  let failed = false;
  // The rows are staged for the fold worker where there is one (staging.ts); started before the transaction.
  const staging = await db.exclusive((conn) => {
    const s = stagingOf(conn);
    s?.settleIfFailed(); // a worker that failed leaves what it did not fold to the next write (or read)
    return s;
  });
  // A worker far behind gets help from the writes (staging.ts MAX_BACKLOG). One that seals staged points straight into
  // blocks is waited for a while first: a fold here would send their window the long way (seal-staged.ts).
  for (let waited = 0; staging?.behind === true;) {
    if (staging.sealingStraight && waited++ < MAX_WAITS) await new Promise((resolve) => setTimeout(resolve, 1));
    else if (!(await db.exclusive(() => staging.help()))) break;
  }
  const stage = staging?.active === true;
  // Staging: the body is scanned before the transaction when it needs nothing new in the catalogue (the usual write),
  // so the write lock (which the fold worker waits for) is held only for the rights, the staged rows and the commit.
  const early = stage ? await db.exclusive((conn) => {
    catalogue = catalogueOf(conn);
    const scanned = catalogue.withoutWrites(() => scan(catalogue!, req, ++requestSeq, true));
    return scanned === undefined ? undefined : { scanned, generation: catalogue.generation };
  }) : undefined;
  let staged = 0;
  try {
    const stored = await db.tx(async (tx) => {
      try {
        // 1. Scan every line into the writer (synchronous, on the connection: no promise per line); an early scan
        //    stands while the catalogue did not change since.
        const scanned = await tx.exclusive((conn) => {
          catalogue = catalogueOf(conn);
          if (early !== undefined) {
            catalogue.sync();
            if (catalogue.generation === early.generation) return early.scanned;
          }
          return scan(catalogue, req, ++requestSeq, stage);
        });
        // 2. The rights, through the shared rules (asynchronous), in the same transaction.
        await requireTelemetryWrite(tx, req.userId, scanned.nodeIds);
        // 3. Store the buffered rows (synchronous again).
        const { writer } = scanned;
        if (writer !== undefined) {
          await tx.exclusive(() => {
            writer.flush();
            staged = writer.staged;
            // Our own CREATE/ALTER TABLE changed the schema cookie: record it, so the next request does not take it for
            // someone else's change.
            if (writer.schemaChanged) catalogue!.noteOwnSchemaChange();
          });
        }
        return scanned.stored;
      } catch (err) {
        // The transaction rolls back: the mirror may hold namespaces, series, fields or shards that will not exist.
        // Reset here, while the transaction still holds the connection, so no other request sees them.
        failed = true;
        catalogue?.reset();
        throw err;
      }
    });
    // committed (and on disk): the worker may fold them
    staging?.committed(staged);
    return stored;
  } catch (err) {
    // BEGIN or COMMIT failed: reset too (a request that took the connection in between has already noticed a failed
    // COMMIT through the catalogue's witness).
    if (!failed) catalogue?.reset();
    throw err;
  }
}

/**
 * Scans the body into a shard writer, creating the namespace, series and fields it needs: inside the write's
 * transaction, or before it under Catalogue.withoutWrites. `request` is new for each scan (series note the scan that
 * saw them first).
 */
function scan(catalogue: Catalogue, req: WriteRequest, request: number, stage: boolean): Scanned {
  catalogue.sync();
  req.observe?.begin();
  const retainFrom = req.retainFromMs ?? -Infinity;
  const sc = new LineScanner(req.body, { precision: req.precision, nowMs: req.now });
  const isText = (text: string) => sc.seriesTextIs(text);
  const badLine = nulLine(req.body);
  let ns: NamespaceInfo | undefined;
  let writer: ShardWriter | undefined;
  const nodeIds = new Set<string>();
  // This request's series by the hash of their section text: a plain map read per line, where the catalogue's LRU
  // moves the entry on every read (a delete and a set per line).
  const seen = new Map<number, SeriesText>();
  let stored = 0;
  while (sc.nextLine()) {
    if (sc.line === badLine) throw new LineProtocolError(sc.line, NUL_REASON);
    // Created with the first point: an empty body creates nothing.
    ns ??= catalogue.ensure(req.namespace, req.now);
    let known = seen.get(sc.seriesHash);
    while (known !== undefined && !sc.seriesTextIs(known.text)) known = known.next;
    let series: SeriesInfo | undefined = known?.series;
    if (series === undefined) {
      series = catalogue.seriesByText(ns, sc.seriesHash, isText);
      if (series === undefined) {
        sc.parseSeries();
        const tags: Array<[string, string]> = [];
        for (let k = 0; k < sc.tagCount; k++) tags.push([sc.tagKeys[k], sc.tagValues[k]]);
        series = catalogue.ensureSeries(ns, sc.measurement, tags, sc.seriesText(), sc.seriesHash, req.now);
      }
      seen.set(sc.seriesHash, { text: sc.seriesText(), series, next: seen.get(sc.seriesHash) });
    }
    if (series.seenBy !== request) {
      series.seenBy = request;
      nodeIds.add(series.nodeId);
    }
    sc.parseFields();
    if (sc.timeMs < retainFrom) continue;
    writer ??= new ShardWriter(catalogue, ns, req.now, stage);
    writer.add(series, sc);
    req.observe?.line(series.measurement.name, series.nodeId, sc);
    stored++;
  }
  return { writer, nodeIds, stored };
}
