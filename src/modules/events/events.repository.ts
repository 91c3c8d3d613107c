import { sql, type Kysely } from 'kysely';
import type { Db } from '../../db/database.js';
import { isPostgres } from '../../db/dialect.js';
import { readUnknown } from '../../db/reads.js';
import { publisherOf } from './events.publisher.js';

// The events table (migration 20261124T0800): written by triggers only (on PostgreSQL through
// events_pending and events_publish(), migration 20261126T0200), read here. Every read of the feed
// sees every event committed before it began: on PostgreSQL it publishes first (events.publisher.ts).

export interface EventsTable {
  sequence: number | string;
  id: string;
  type: string;
  path: string;
  /** The resource as JSON text. */
  resource: string;
  at: string;
}

export interface EventRow {
  sequence: number;
  id: string;
  type: string;
  path: string;
  resource: string;
  at: string;
}

export const eventsDb = (db: Db) => db.withTables<{ events: EventsTable }>() as unknown as Kysely<{ events: EventsTable }>;

/**
 * Events after `after` in order; `types`: only these (null: all). Publishes first: every event
 * committed before the call is read (readPublished: a later page of the same read, no need).
 */
export async function readEvents(db: Db, after: number, limit: number, types: readonly string[] | null): Promise<EventRow[]> {
  if (isPostgres(db)) await publisherOf(db).publish();
  return readPublished(db, after, limit, types);
}

/** readEvents without publishing first: the next pages of a read that published (or read the head) when it began. */
export async function readPublished(db: Db, after: number, limit: number, types: readonly string[] | null, upTo?: number): Promise<EventRow[]> {
  const rows = await eventsDb(db)
    .selectFrom('events')
    .select(['sequence', 'id', 'type', 'path', 'resource', 'at'])
    .where('sequence', '>', after)
    .$if(upTo !== undefined, (q) => q.where('sequence', '<=', upTo!))
    .$if(types !== null, (q) => q.where('type', 'in', types!))
    .orderBy('sequence')
    .limit(limit)
    .execute();
  // PostgreSQL's bigint arrives as text.
  for (const row of rows) row.sequence = Number(row.sequence);
  return rows as EventRow[];
}

/**
 * The newest sequence: every event up to it has committed, and every event committed before the call
 * is at or below it (on PostgreSQL it publishes first; what it answers comes from the events).
 */
export async function lastSequence(db: Db): Promise<number> {
  if (isPostgres(db)) {
    readUnknown();
    return publisherOf(db).publish();
  }
  const row = await eventsDb(db)
    .selectFrom('events')
    .select(sql<number | string | null>`max(sequence)`.as('last'))
    .executeTakeFirst();
  return Number(row?.last ?? 0);
}

/** One event as JSON text: the resource is stored as JSON already. */
export function eventJson(row: EventRow): string {
  return `{"id":${JSON.stringify(row.id)},"sequence":${row.sequence},"type":${JSON.stringify(row.type)},"path":${JSON.stringify(row.path)},"resource":${row.resource},"at":${JSON.stringify(row.at)}}`;
}

/**
 * Deletes events written before `cutoff` (ISO time), oldest first in ranges of the primary key, so
 * neither backend needs an index on `at` that every write would pay for. The newest event is kept
 * whatever its age: SQLite numbers the next one after it (migration 20261124T0800). Returns how many went.
 */
export async function deleteEventsBefore(db: Db, cutoff: string, batch = 5000): Promise<number> {
  const edb = eventsDb(db);
  const newest = await lastSequence(db);
  let total = 0;
  for (;;) {
    const first = await edb.selectFrom('events').select(['sequence', 'at']).orderBy('sequence').limit(1).executeTakeFirst();
    if (!first || first.at >= cutoff) return total;
    const below = Math.min(Number(first.sequence) + batch, newest);
    if (below <= Number(first.sequence)) return total;
    const result = await edb.deleteFrom('events').where('sequence', '<', below).where('at', '<', cutoff).executeTakeFirst();
    total += Number(result.numDeletedRows);
  }
}
