import type { CollectionDef } from '../../query/index.js';

export const USER_STATUSES = ['active', 'inactive'] as const;

/** What GET /users (and its aliases) may filter and sort by. */
export const usersCollection: CollectionDef = {
  name: 'users',
  filters: {
    status: { column: 'status', op: 'eq', type: 'string', values: USER_STATUSES, description: 'Exact status.' },
    older_than: { column: 'age', op: 'gt', type: 'integer', description: 'Age greater than the value.' },
    younger_than: { column: 'age', op: 'lt', type: 'integer', description: 'Age less than the value.' },
    lives_in: {
      column: 'country',
      op: 'eq',
      type: 'string',
      caseInsensitive: true,
      list: true,
      description: 'Country of residence, case-insensitive.',
    },
    first_name: { column: 'first_name', op: 'eq', type: 'string', lowerIndexed: true, description: 'Exact first name.' },
    last_name: { column: 'last_name', op: 'eq', type: 'string', lowerIndexed: true, description: 'Exact last name.' },
    first_name_starts_with: {
      column: 'first_name',
      op: 'prefix',
      type: 'string',
      description: 'First name starts with the value, ASCII case ignored (typeahead).',
    },
    last_name_starts_with: {
      column: 'last_name',
      op: 'prefix',
      type: 'string',
      description: 'Last name starts with the value, ASCII case ignored (typeahead).',
    },
  },
  sortable: {
    id: { column: 'id', type: 'integer' },
    first_name: { column: 'first_name', type: 'string' },
    last_name: { column: 'last_name', type: 'string' },
    age: { column: 'age', type: 'integer' },
    status: { column: 'status', type: 'string' },
    country: { column: 'country', type: 'string' },
  },
};
