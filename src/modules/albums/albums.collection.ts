import type { CollectionDef } from '../../query/index.js';

/** What the `albums` of GET /artists/{artist_id}/albums may be filtered and sorted by. */
export const albumsCollection: CollectionDef = {
  name: 'albums',
  filters: {
    name: { column: 'name', op: 'eq', type: 'string', description: 'Exact name.' },
    year: { column: 'year', op: 'eq', type: 'integer', description: 'Release year.' },
  },
  sortable: {
    id: { column: 'id', type: 'integer' },
    name: { column: 'name', type: 'string' },
    year: { column: 'year', type: 'integer' },
  },
};
