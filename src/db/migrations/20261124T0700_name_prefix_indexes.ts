import { sql, type Kysely } from 'kysely';

// Typeahead (`name_starts_with`, query/text.ts prefixRange) is a range on the folded name, ciKey's
// `lower(name collate "binary")`, which these indexes hold in the same text on both backends (on
// PostgreSQL the expression's collation is C, so its btree serves ranges and the case-insensitive
// sort). The catalogue lists below an artist or an album are scoped by it, so their indexes lead
// with the parent: the range or the sort is then one index range per parent. `released_after` /
// `released_before` get (artist_id, year). An album's songs are read through (album_id, id) for
// their duration ranges: an album holds tens of songs, and each index on songs costs the hot write
// path (POST a song) on every insert.

const FOLDED_NAME = 'lower(name collate "binary")';

export const NAME_PREFIX_INDEXES = {
  artists_name_idx: ['artists', `${FOLDED_NAME}, id`],
  albums_artist_name_idx: ['albums', `artist_id, ${FOLDED_NAME}, id`],
  albums_artist_year_idx: ['albums', 'artist_id, year, id'],
  songs_album_name_idx: ['songs', `album_id, ${FOLDED_NAME}, id`],
} as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, [table, columns]] of Object.entries(NAME_PREFIX_INDEXES)) {
    await db.schema.createIndex(name).on(table).expression(sql.raw(columns)).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of Object.keys(NAME_PREFIX_INDEXES)) await db.schema.dropIndex(name).execute();
}
