import { sql, type Kysely } from 'kysely';
import type { Db } from '../../db/database.js';
import { isPostgres } from '../../db/migrations/util.js';
import type { Webhook } from './webhooks.schemas.js';

// Tables of migration 20261124T0710.

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
}

export interface WebhookDeliveriesTable {
  id: number | string;
  webhook_id: number;
  sequence: number | string;
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
    status: row.status,
    last_sequence: Number(row.cursor),
    attempts: row.attempts,
    next_attempt_at: row.next_attempt_at,
    last_error: row.last_error,
    created_at: row.created_at,
  };
}

export async function createWebhook(db: Db, url: string, types: string[], secret: string, cursor: number): Promise<Webhook> {
  const now = new Date().toISOString();
  const row = await webhooksDb(db)
    .insertInto('webhooks')
    .values({ url, types: types.join(','), secret, created_at: now, status: 'active', cursor, attempts: 0, next_attempt_at: now } as never)
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

export async function listDeliveries(db: Db, webhookId: number, size: number) {
  const rows = await webhooksDb(db)
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .orderBy('id', 'desc')
    .limit(size)
    .execute();
  return rows.map(({ webhook_id: _w, ...row }) => ({ ...row, id: Number(row.id), sequence: Number(row.sequence) }));
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

/** Moves the cursor past events none of the webhook's types (no delivery needed). */
export async function skipTo(db: Db, id: number, owner: string, cursor: number): Promise<void> {
  await webhooksDb(db).updateTable('webhooks').set({ cursor }).where('id', '=', id).where('lease_owner', '=', owner).where('cursor', '<', cursor).execute();
}

export interface Attempt {
  sequence: number;
  eventId: string;
  type: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * Records one attempt and its effect in one transaction: delivered moves the cursor; failed schedules
 * the retry, or marks the webhook failing at the last attempt.
 */
export async function recordAttempt(
  db: Db,
  id: number,
  owner: string,
  attempt: Attempt,
  outcome: { delivered: true } | { delivered: false; retryAt: string | null },
) {
  const now = new Date().toISOString();
  await db.transaction().execute(async (trx) => {
    const wdb = webhooksDb(trx);
    const update = outcome.delivered
      ? { cursor: attempt.sequence, attempts: 0, last_error: null, next_attempt_at: now }
      : outcome.retryAt
        ? { attempts: attempt.attempt, last_error: attempt.error, next_attempt_at: outcome.retryAt }
        : { attempts: attempt.attempt, last_error: attempt.error, status: 'failing', lease_owner: null, lease_until: null };
    const moved = await wdb.updateTable('webhooks').set(update).where('id', '=', id).where('lease_owner', '=', owner).executeTakeFirst();
    if (Number(moved.numUpdatedRows) === 0) return;
    await wdb
      .insertInto('webhook_deliveries')
      .values({
        webhook_id: id,
        sequence: attempt.sequence,
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
  });
}

export async function deleteDeliveriesBefore(db: Db, cutoff: string): Promise<void> {
  await webhooksDb(db).deleteFrom('webhook_deliveries').where('at', '<', cutoff).execute();
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
