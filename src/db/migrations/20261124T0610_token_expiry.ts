import type { Kysely } from 'kysely';

// A token may expire: `expires_at` (ISO time) past which it is refused with 401; null never expires.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tokens').addColumn('expires_at', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tokens').dropColumn('expires_at').execute();
}
