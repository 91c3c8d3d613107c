import { sql, type Kysely } from 'kysely';

// lives_in (and aliases built on it, like young-brazilians) pages in id order by default. The index
// of 20261122T0100 put age before id, so SQLite walked every matching age and sorted them all for a
// page of 20 (about 14,000 rows for young-brazilians on a million users). With id before age the
// index yields the rows in id order and still filters the age range from the index itself: a first
// page reads a few hundred index entries. Counting the rows of an alias then walks all of the
// country's rows in that status, but exact totals are cached until the next write (query/count-cache).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('users_country_idx').execute();
  await db.schema
    .createIndex('users_country_idx')
    .on('users')
    .expression(sql`lower(country collate "binary"), status, id, age`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('users_country_idx').execute();
  await db.schema
    .createIndex('users_country_idx')
    .on('users')
    .expression(sql`lower(country collate "binary"), status, age, id`)
    .execute();
}
