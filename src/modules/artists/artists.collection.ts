import type { CollectionDef } from '../../query/index.js';

/** What GET /artists may filter and sort by. */
export const artistsCollection: CollectionDef = {
  name: 'artists',
  filters: { name: { column: 'name', op: 'eq', type: 'string', description: 'Exact name.' } },
  sortable: { id: { column: 'id', type: 'integer' }, name: { column: 'name', type: 'string' } },
};
