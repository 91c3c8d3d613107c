import type { CollectionDef } from '../../query/index.js';

/** GET /aliases: by collection, then name (the order it always had); paginated as every list is. */
export const aliasesCollection: CollectionDef = {
  name: 'aliases',
  filters: { collection: { column: 'collection', op: 'eq', type: 'string', description: 'The collection the aliases list.' } },
  sortable: { id: { column: 'id', type: 'integer' }, collection: { column: 'collection', type: 'string' }, name: { column: 'name', type: 'string' } },
  defaultSort: [
    { field: 'collection', direction: 'asc' },
    { field: 'name', direction: 'asc' },
  ],
};
