import type { Selectable } from 'kysely';
import type { Db, IdempotencyKeyTable } from '../db/database.js';

export type IdempotencyRecord = Selectable<IdempotencyKeyTable>;

/** Takes the key for this request; throws a unique violation when the caller already holds it. */
export async function reserveKey(
  db: Db,
  row: { caller: string; key: string; fingerprint: string; now: Date; ttlSeconds: number },
): Promise<number> {
  const inserted = await db
    .insertInto('idempotency_keys')
    .values({
      caller: row.caller,
      key: row.key,
      fingerprint: row.fingerprint,
      status: null,
      headers: null,
      body: null,
      created_at: row.now.toISOString(),
      expires_at: new Date(row.now.getTime() + row.ttlSeconds * 1000).toISOString(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return inserted.id;
}

export async function findKey(db: Db, caller: string, key: string): Promise<IdempotencyRecord | undefined> {
  return db.selectFrom('idempotency_keys').selectAll().where('caller', '=', caller).where('key', '=', key).executeTakeFirst();
}

export async function completeKey(db: Db, id: number, response: { status: number; headers: Record<string, string>; body: string }) {
  await db
    .updateTable('idempotency_keys')
    .set({ status: response.status, headers: JSON.stringify(response.headers), body: response.body })
    .where('id', '=', id)
    .execute();
}

/** Frees a key whose request failed on our side, so the client's retry runs it again. */
export async function releaseKey(db: Db, id: number) {
  await db.deleteFrom('idempotency_keys').where('id', '=', id).execute();
}

/** Drops one expired record, only if it is still the expired one (a concurrent request may have replaced it). */
export async function dropExpiredKey(db: Db, record: IdempotencyRecord) {
  await db.deleteFrom('idempotency_keys').where('id', '=', record.id).where('expires_at', '=', record.expires_at).execute();
}

export async function purgeExpiredKeys(db: Db, now: Date) {
  await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now.toISOString()).execute();
}
