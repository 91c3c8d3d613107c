import type { Kysely } from 'kysely';

// A reservation of an Idempotency-Key is a lease owned by the request running it (http/idempotency
// .plugin.ts): `owner` names that request, `lease_until` is when the lease lapses unless renewed. A
// reservation whose request died (SIGKILL, the database gone while it ran) lapses, and a retry takes
// it over instead of meeting a 409 until the key expires. Rows reserved before this migration have
// no lease: an unfinished one among them is free to take over at once.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('owner', 'text').execute();
  await db.schema.alterTable('idempotency_keys').addColumn('lease_until', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('lease_until').execute();
  await db.schema.alterTable('idempotency_keys').dropColumn('owner').execute();
}
