import type { CollectionDef } from '../../query/index.js';

/** GET /tokens: the active tokens, oldest first; paginated as every list is. */
export const tokensCollection: CollectionDef = {
  name: 'tokens',
  filters: {},
  sortable: { id: { column: 'id', type: 'integer' } },
};
