import type { Kysely } from 'kysely';
import { primaryId } from './util.js';

// Remembered answers to POSTs sent with an Idempotency-Key. The unique (caller, key) pair is what
// makes concurrent retries safe: only one request can hold a key.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('id', 'integer', primaryId(db))
    .addColumn('caller', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('headers', 'text')
    .addColumn('body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('idempotency_keys_caller_key_unique', ['caller', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expires_at_idx').on('idempotency_keys').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
}
