import { sql, type Kysely } from 'kysely';

// Webhooks (issue 34):
// - `batch_size`: the most events one POST carries. Existing webhooks keep 1, the one-event payload
//   their receivers were written for; a larger one sends {"events": [...]} (docs/events.md).
// - `revision`: moved by every PATCH. A sender records what it sent only while the revision it read
//   is still the webhook's, so a resume or a rewind (`from`) is never overwritten by a send that was
//   in flight when it came.
// - The delivery log has one row per POST: `last_sequence` and `events` say what it carried
//   (existing rows carried one event each).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('webhooks')
    .addColumn('batch_size', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .alterTable('webhooks')
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('last_sequence', 'bigint').execute();
  await db.schema
    .alterTable('webhook_deliveries')
    .addColumn('events', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await sql`update webhook_deliveries set last_sequence = sequence`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').dropColumn('events').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('last_sequence').execute();
  await db.schema.alterTable('webhooks').dropColumn('revision').execute();
  await db.schema.alterTable('webhooks').dropColumn('batch_size').execute();
}
