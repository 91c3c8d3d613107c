import type { CollectionDef } from '../../query/index.js';
import { EMBED_MAX_PER_PARENT } from '../../query/embed.js';
import { NAME_STARTS_WITH, nameMatches } from '../../query/collection.js';

/** What GET /artists may filter and sort by. */
export const artistsCollection: CollectionDef = {
  name: 'artists',
  filters: {
    name: { column: 'name', op: 'eq', type: 'string', description: 'Exact name.' },
    name_starts_with: NAME_STARTS_WITH,
    q: nameMatches(1),
  },
  sortable: { id: { column: 'id', type: 'integer' }, name: { column: 'name', type: 'string' } },
  embeds: {
    albums: `Each artist carries \`albums\`: its first ${EMBED_MAX_PER_PARENT} albums by id (all of them: GET /artists/{artist_id}/albums), read in one query for the page.`,
  },
};
