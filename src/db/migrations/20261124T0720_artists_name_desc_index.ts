import { sql, type Kysely } from 'kysely';

// GET /artists?sort_by=name&order=desc orders by the folded name descending and then by id
// ascending (ties keep their id order whatever the direction). Read backward, the ascending index of
// 20261124T0700 gives ties in descending id order, so both backends sorted each run of tying names
// (SQLite: a temporary B-tree for the right part of the ORDER BY; PostgreSQL: an incremental sort).
// This index holds the descending order itself. The lists below an artist or an album are scoped to
// tens of rows per parent and keep their single index.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('artists_name_desc_idx').on('artists').expression(sql.raw('lower(name collate "binary") desc, id')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('artists_name_desc_idx').execute();
}
