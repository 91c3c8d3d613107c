import type { Selectable } from 'kysely';
import type { Db, IdempotencyKeyTable } from '../db/database.js';

export type IdempotencyRecord = Selectable<IdempotencyKeyTable>;

/** The lease a running request holds on its key (see http/idempotency.plugin.ts). */
export interface Lease {
  id: number;
  owner: string;
}

/** Takes the key for this request; throws a unique violation when the caller already holds it. */
export async function reserveKey(
  db: Db,
  row: { caller: string; key: string; fingerprint: string; now: Date; ttlSeconds: number; owner: string; leaseUntil: Date },
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
      owner: row.owner,
      lease_until: row.leaseUntil.toISOString(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return inserted.id;
}

export async function findKey(db: Db, caller: string, key: string): Promise<IdempotencyRecord | undefined> {
  return db.selectFrom('idempotency_keys').selectAll().where('caller', '=', caller).where('key', '=', key).executeTakeFirst();
}

/**
 * Takes over an unfinished reservation whose lease has lapsed (its request died): true when this
 * request now holds it. Of several takers exactly one matches the old lease and wins.
 */
export async function takeOverKey(db: Db, record: IdempotencyRecord, owner: string, leaseUntil: Date): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ owner, lease_until: leaseUntil.toISOString() })
    .where('id', '=', record.id)
    .where('status', 'is', null)
    .where((eb) => (record.lease_until === null ? eb('lease_until', 'is', null) : eb('lease_until', '=', record.lease_until)))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Extends the lease of a request still running; false when it no longer holds the key. */
export async function renewLease(db: Db, lease: Lease, leaseUntil: Date): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ lease_until: leaseUntil.toISOString() })
    .where('id', '=', lease.id)
    .where('owner', '=', lease.owner)
    .where('status', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Stores the answer if this request still holds the key: false when a retry took it over (its lease
 * lapsed). In the keyed write's transaction, so the answer commits with the write or not at all.
 */
export async function completeKey(db: Db, lease: Lease, response: { status: number; headers: Record<string, string>; body: string }): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ status: response.status, headers: JSON.stringify(response.headers), body: response.body, owner: null, lease_until: null })
    .where('id', '=', lease.id)
    .where('owner', '=', lease.owner)
    .where('status', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Frees a key whose request failed on our side, so the client's retry runs it again. */
export async function releaseKey(db: Db, lease: Lease) {
  await db.deleteFrom('idempotency_keys').where('id', '=', lease.id).where('owner', '=', lease.owner).where('status', 'is', null).execute();
}

/** Drops one expired record, only if it is still the expired one (a concurrent request may have replaced it). */
export async function dropExpiredKey(db: Db, record: IdempotencyRecord) {
  await db.deleteFrom('idempotency_keys').where('id', '=', record.id).where('expires_at', '=', record.expires_at).execute();
}

export async function purgeExpiredKeys(db: Db, now: Date) {
  await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now.toISOString()).execute();
}
