import type { CollectionDef } from '../../query/index.js';
import { EMBED_MAX_PER_PARENT } from '../../query/embed.js';
import { NAME_EQUALS, NAME_STARTS_WITH, nameMatches } from '../../query/collection.js';

/** What the `albums` of GET /artists/{artist_id}/albums may be filtered and sorted by. */
export const albumsCollection: CollectionDef = {
  name: 'albums',
  filters: {
    name: NAME_EQUALS,
    name_starts_with: NAME_STARTS_WITH,
    q: nameMatches(2),
    year: { column: 'year', op: 'eq', type: 'integer', description: 'Release year.' },
    released_after: { column: 'year', op: 'gt', type: 'integer', description: 'Release year greater than the value.' },
    released_before: { column: 'year', op: 'lt', type: 'integer', description: 'Release year less than the value.' },
  },
  sortable: {
    id: { column: 'id', type: 'integer' },
    // As people read it (its collation key: src/db/collation.ts).
    name: { column: 'name', type: 'string', key: true },
    year: { column: 'year', type: 'integer' },
  },
  embeds: {
    songs: `Each album carries \`songs\`: its first ${EMBED_MAX_PER_PARENT} songs by id (all of them: GET .../albums/{album_id}/songs), read in one query for the page.`,
  },
};
