import type { CollectionDef } from '../../query/index.js';

/** What the `songs` of GET .../albums/{album_id}/songs may be filtered and sorted by. */
export const songsCollection: CollectionDef = {
  name: 'songs',
  filters: { name: { column: 'name', op: 'eq', type: 'string', description: 'Exact name.' } },
  sortable: {
    id: { column: 'id', type: 'integer' },
    name: { column: 'name', type: 'string' },
    // mm:ss with two-digit minutes: text order is duration order.
    time: { column: 'time', type: 'string' },
  },
};
