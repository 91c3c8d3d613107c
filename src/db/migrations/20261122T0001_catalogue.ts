import type { Kysely } from 'kysely';
import { primaryId } from './util.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('artists')
    .addColumn('id', 'integer', primaryId(db))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('image', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();

  await db.schema
    .createTable('albums')
    .addColumn('id', 'integer', primaryId(db))
    .addColumn('artist_id', 'integer', (c) => c.notNull().references('artists.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('year', 'integer', (c) => c.notNull())
    .addColumn('image', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.createIndex('albums_artist_id_idx').on('albums').columns(['artist_id', 'id']).execute();

  await db.schema
    .createTable('songs')
    .addColumn('id', 'integer', primaryId(db))
    .addColumn('album_id', 'integer', (c) => c.notNull().references('albums.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('time', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.createIndex('songs_album_id_idx').on('songs').columns(['album_id', 'id']).execute();

  await db.schema
    .createTable('tokens')
    .addColumn('id', 'integer', primaryId(db))
    .addColumn('name', 'text')
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('tokens').execute();
  await db.schema.dropTable('songs').execute();
  await db.schema.dropTable('albums').execute();
  await db.schema.dropTable('artists').execute();
}
