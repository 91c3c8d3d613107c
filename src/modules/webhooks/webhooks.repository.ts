import { sql, type Kysely } from 'kysely';
import type { Db } from '../../db/database.js';
import { isPostgres } from '../../db/dialect.js';
import { eventsDb } from '../events/events.repository.js';
import { totalFromPage, type ListPlan, type ListResult } from '../../query/index.js';
import { orderKeys } from '../../query/sql.js';
import { cursorScope, encodeCursor } from '../../query/cursor.js';
import type { Webhook } from './webhooks.schemas.js';

// Tables of migrations 20261124T0810 and 20261126T0100.

export interface WebhooksTable {
  id: number;
  url: string;
  types: string;
  secret: string;
  created_at: string;
  status: string;
  cursor: number | string;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  batch_size: number;
  revision: number;
}

export interface WebhookDeliveriesTable {
  id: number | string;
  webhook_id: number;
  sequence: number | string;
  last_sequence: number | string | null;
  events: number;
  event_id: string;
  type: string;
  attempt: number;
  outcome: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  at: string;
}

type Tables = { webhooks: WebhooksTable; webhook_deliveries: WebhookDeliveriesTable };
export type WebhooksDb = Kysely<Tables>;
export const webhooksDb = (db: Db) => db.withTables<Tables>() as unknown as WebhooksDb;

export function toWebhook(row: WebhooksTable): Webhook {
  return {
    id: row.id,
    url: row.url,
    types: row.types.split(','),
    batch_size: row.batch_size,
    status: row.status,
    last_sequence: Number(row.cursor),
    attempts: row.attempts,
    next_attempt_at: row.next_attempt_at,
    last_error: row.last_error,
    created_at: row.created_at,
  };
}

export async function createWebhook(db: Db, url: string, types: string[], secret: string, batchSize: number, cursor: number): Promise<Webhook> {
  const now = new Date().toISOString();
  const row = await webhooksDb(db)
    .insertInto('webhooks')
    .values({
      url,
      types: types.join(','),
      secret,
      batch_size: batchSize,
      created_at: now,
      status: 'active',
      cursor,
      attempts: 0,
      next_attempt_at: now,
    } as never)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toWebhook(row);
}

export async function listWebhooks(db: Db): Promise<Webhook[]> {
  return (await webhooksDb(db).selectFrom('webhooks').selectAll().orderBy('id').execute()).map(toWebhook);
}

export async function findWebhook(db: Db, id: number): Promise<Webhook | undefined> {
  const row = await webhooksDb(db).selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toWebhook(row);
}

export async function deleteWebhook(db: Db, id: number): Promise<boolean> {
  const result = await webhooksDb(db).deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Webhooks that may have work: active, due, not leased (with their cursors). A read: idle polls write nothing. */
export async function dueWebhooks(db: Db, now: string): Promise<{ id: number; cursor: number }[]> {
  const rows = await webhooksDb(db)
    .selectFrom('webhooks')
    .select(['id', 'cursor'])
    .where('status', '=', 'active')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: r.id, cursor: Number(r.cursor) }));
}

/**
 * Takes the lease of a webhook if it is still free. On PostgreSQL the row is locked with SKIP LOCKED
 * first, so instances racing for it never wait on one another: one wins, the others move on.
 */
export async function claimWebhook(db: Db, id: number, owner: string, now: string, until: string): Promise<WebhooksTable | undefined> {
  const wdb = webhooksDb(db);
  const free = wdb
    .selectFrom('webhooks')
    .select('id')
    .where('id', '=', id)
    .where('status', '=', 'active')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .$if(isPostgres(db), (q) => q.forUpdate().skipLocked());
  return wdb.updateTable('webhooks').set({ lease_owner: owner, lease_until: until }).where('id', 'in', free).returningAll().executeTakeFirst();
}

/** Extends a lease this process holds; false when it no longer holds it (the webhook was deleted). */
export async function renewLease(db: Db, id: number, owner: string, until: string): Promise<boolean> {
  const result = await webhooksDb(db)
    .updateTable('webhooks')
    .set({ lease_until: until })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function releaseLease(db: Db, id: number, owner: string): Promise<void> {
  await webhooksDb(db).updateTable('webhooks').set({ lease_owner: null, lease_until: null }).where('id', '=', id).where('lease_owner', '=', owner).execute();
}

/** The revision of a webhook while this process holds its lease; undefined when it does not (deleted, or the lease lapsed). */
export async function heldRevision(db: Db, id: number, owner: string): Promise<number | undefined> {
  const row = await webhooksDb(db).selectFrom('webhooks').select('revision').where('id', '=', id).where('lease_owner', '=', owner).executeTakeFirst();
  return row?.revision;
}

/** The webhook as its sender holds it: while it holds the lease, at the revision it read. */
export async function leasedWebhook(db: Db, id: number, owner: string): Promise<WebhooksTable | undefined> {
  return webhooksDb(db).selectFrom('webhooks').selectAll().where('id', '=', id).where('lease_owner', '=', owner).executeTakeFirst();
}

/** Moves the cursor past events of none of the webhook's types (no delivery needed), unless a PATCH came since. */
export async function skipTo(db: Db, id: number, owner: string, revision: number, cursor: number): Promise<void> {
  await webhooksDb(db)
    .updateTable('webhooks')
    .set({ cursor })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('revision', '=', revision)
    .where('cursor', '<', cursor)
    .execute();
}

/** One POST: the events it carried (first and last sequence, how many), and what came of it. */
export interface Attempt {
  sequence: number;
  lastSequence: number;
  events: number;
  eventId: string;
  type: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * What recording an attempt found: recorded (with the webhook's batch size now: a PATCH may have
 * changed it); the webhook was PATCHed since the sender read it (the attempt is logged, nothing else
 * moves, the sender reads the webhook again); or the lease is gone (the webhook was deleted).
 */
export type Recorded = { state: 'recorded'; batchSize: number } | { state: 'revised' } | { state: 'lost' };

/**
 * Records one attempt and its effect in one transaction: delivered moves the cursor to the POST's
 * last event and extends the lease (the sender goes on); failed schedules the retry, or marks the
 * webhook failing at the last attempt. Only at the revision the sender read.
 */
export async function recordAttempt(
  db: Db,
  id: number,
  owner: string,
  revision: number,
  leaseUntil: string,
  attempt: Attempt,
  outcome: { delivered: true } | { delivered: false; retryAt: string | null },
): Promise<Recorded> {
  const now = new Date().toISOString();
  return db.transaction().execute(async (trx) => {
    const wdb = webhooksDb(trx);
    const update = outcome.delivered
      ? { cursor: attempt.lastSequence, attempts: 0, last_error: null, next_attempt_at: now, lease_until: leaseUntil }
      : outcome.retryAt
        ? { attempts: attempt.attempt, last_error: attempt.error, next_attempt_at: outcome.retryAt }
        : { attempts: attempt.attempt, last_error: attempt.error, status: 'failing', lease_owner: null, lease_until: null };
    const mine = () => wdb.updateTable('webhooks').where('id', '=', id).where('lease_owner', '=', owner);
    const moved = await mine().set(update).where('revision', '=', revision).returning('batch_size').executeTakeFirst();
    if (!moved) {
      // Still ours but PATCHed since: log what was sent, move nothing (the sender goes on from the
      // webhook as it is now). Not ours any more: deleted.
      const held = await mine().set({ lease_until: leaseUntil }).executeTakeFirst();
      if (Number(held.numUpdatedRows) === 0) return { state: 'lost' };
    }
    await wdb
      .insertInto('webhook_deliveries')
      .values({
        webhook_id: id,
        sequence: attempt.sequence,
        last_sequence: attempt.lastSequence,
        events: attempt.events,
        event_id: attempt.eventId,
        type: attempt.type,
        attempt: attempt.attempt,
        outcome: outcome.delivered ? 'delivered' : 'failed',
        status_code: attempt.statusCode,
        error: attempt.error,
        duration_ms: attempt.durationMs,
        at: now,
      } as never)
      .execute();
    return moved ? { state: 'recorded', batchSize: moved.batch_size } : { state: 'revised' };
  });
}

/**
 * PATCH: `active` sends again at once with a fresh count of attempts; `from` sets where deliveries
 * go on (the first event at or after it). Moves the revision, so a send in flight records nothing
 * over it. Undefined when there is no such webhook.
 */
export async function reviseWebhook(
  db: Db,
  id: number,
  change: { active: boolean; cursor: number | undefined; batchSize: number | undefined },
): Promise<Webhook | undefined> {
  const now = new Date().toISOString();
  const row = await webhooksDb(db)
    .updateTable('webhooks')
    .set((eb) => ({
      // A batch size alone changes nothing a send in flight records: the sender reads it as it records.
      ...(change.active || change.cursor !== undefined ? { revision: eb('revision', '+', 1) } : {}),
      ...(change.active ? { status: 'active', attempts: 0, next_attempt_at: now } : {}),
      ...(change.cursor !== undefined ? { cursor: change.cursor, attempts: 0, next_attempt_at: now } : {}),
      ...(change.batchSize !== undefined ? { batch_size: change.batchSize } : {}),
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row && toWebhook(row);
}

/** The oldest event still kept (retention deletes from the oldest), or undefined when there is none. */
export async function oldestSequence(db: Db): Promise<number | undefined> {
  const row = await eventsDb(db)
    .selectFrom('events')
    .select(sql<number | string | null>`min(sequence)`.as('first'))
    .executeTakeFirst();
  return row?.first == null ? undefined : Number(row.first);
}

export interface DeliveryRow {
  id: number;
  sequence: number;
  last_sequence: number;
  events: number;
  event_id: string;
  type: string;
  attempt: number;
  outcome: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  at: string;
}

/**
 * A page of a webhook's delivery log in id order (the collection's only sort key), and the total.
 * Cursor pages read one row more than the page, to know whether another follows (`next`).
 */
export async function pageDeliveries(db: Db, webhookId: number, plan: ListPlan): Promise<ListResult<DeliveryRow>> {
  const wdb = webhooksDb(db);
  const { limit, offset, style, after } = plan.request.page;
  const keys = orderKeys(plan);
  const direction = keys[0]!.direction;
  const cursor = style === 'cursor';
  const found = await wdb
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .$if(cursor && after !== undefined, (q) => q.where('id', direction === 'asc' ? '>' : '<', Number(after![0])))
    .orderBy('id', direction)
    .limit(cursor ? limit + 1 : limit)
    .offset(cursor ? 0 : offset)
    .execute();
  const rows = found.slice(0, limit).map(({ webhook_id: _w, ...row }) => ({
    ...row,
    id: Number(row.id),
    sequence: Number(row.sequence),
    last_sequence: Number(row.last_sequence ?? row.sequence),
  }));
  const next = cursor && found.length > limit ? encodeCursor(cursorScope(plan.request.collection, keys), [rows.at(-1)!.id]) : undefined;
  const known = cursor ? (after === undefined && found.length <= limit ? found.length : undefined) : totalFromPage(plan, rows.length);
  if (known !== undefined) return { rows, total: known, ...(next ? { next } : {}) };
  const counted = await wdb
    .selectFrom('webhook_deliveries')
    .select(sql<number | string>`count(*)`.as('n'))
    .where('webhook_id', '=', webhookId)
    .executeTakeFirstOrThrow();
  return { rows, total: Number(counted.n), ...(next ? { next } : {}) };
}

/** Deletes the deliveries made before `cutoff` (ISO time); resolves with how many went. */
export async function deleteDeliveriesBefore(db: Db, cutoff: string): Promise<number> {
  const result = await webhooksDb(db).deleteFrom('webhook_deliveries').where('at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export const webhookCount = async (db: Db) =>
  Number(
    (
      await webhooksDb(db)
        .selectFrom('webhooks')
        .select(sql<number | string>`count(*)`.as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
