import type { CollectionDef } from '../../query/index.js';
import { EMBED_MAX_PER_PARENT } from '../../query/embed.js';
import { NAME_EQUALS, NAME_STARTS_WITH, nameMatches } from '../../query/collection.js';

/** What GET /artists may filter and sort by. */
export const artistsCollection: CollectionDef = {
  name: 'artists',
  filters: {
    name: NAME_EQUALS,
    name_starts_with: NAME_STARTS_WITH,
    q: nameMatches(1),
  },
  // Names as people read them (their collation keys: src/db/collation.ts).
  sortable: { id: { column: 'id', type: 'integer' }, name: { column: 'name', type: 'string', key: true } },
  embeds: {
    albums: `Each artist carries \`albums\`: its first ${EMBED_MAX_PER_PARENT} albums by id (all of them: GET /artists/{artist_id}/albums), read in one query for the page.`,
  },
};
