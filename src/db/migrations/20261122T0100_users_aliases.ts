import { sql, type Kysely } from 'kysely';
import { primaryId } from './util.js';

// Users and aliases. The indexes follow the query conventions on a large users table (the benchmark
// loads a million rows): equality filters first, then the range/sort column, then lower(name) for the
// case-insensitive sort, then id (the tie-breaker). Expression indexes are written in SQL that
// SQLite and PostgreSQL both accept unchanged, and match db/sql.ts's ciKey() text exactly
// (`lower(col collate "binary")`), which is what lets the planner use them.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'integer', primaryId(db))
    .addColumn('first_name', 'text', (c) => c.notNull())
    .addColumn('last_name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('age', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  // Addresses that differ only in case are the same mailbox for every practical purpose: one account each.
  await db.schema
    .createIndex('users_email_key')
    .unique()
    .on('users')
    .expression(sql`lower(email)`)
    .execute();
  // status=active&older_than=30&sort=age:desc,first_name:asc: equality, range, then the sort order.
  await db.schema
    .createIndex('users_status_age_idx')
    .on('users')
    .expression(sql`status, age desc, lower(first_name collate "binary"), id`)
    .execute();
  // lives_in (case-insensitive), with status and the age range of aliases like young-brazilians.
  await db.schema
    .createIndex('users_country_idx')
    .on('users')
    .expression(sql`lower(country collate "binary"), status, age, id`)
    .execute();
  await db.schema.createIndex('users_age_idx').on('users').columns(['age', 'id']).execute();
  // Sorting by name and the exact first_name/last_name filters (lower(x) = lower(?) and x = ?).
  await db.schema
    .createIndex('users_first_name_idx')
    .on('users')
    .expression(sql`lower(first_name collate "binary"), id`)
    .execute();
  await db.schema
    .createIndex('users_last_name_idx')
    .on('users')
    .expression(sql`lower(last_name collate "binary"), id`)
    .execute();

  await db.schema
    .createTable('aliases')
    .addColumn('id', 'integer', primaryId(db))
    .addColumn('collection', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('query', 'text', (c) => c.notNull())
    .addUniqueConstraint('aliases_collection_name_key', ['collection', 'name'])
    .execute();
  await db
    .insertInto('aliases' as never)
    .values({
      collection: 'users',
      name: 'young-brazilians',
      query: 'status=active&lives_in=brazil&older_than=18&younger_than=35',
    })
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('aliases').execute();
  await db.schema.dropTable('users').execute();
}
