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
      text: 'fold',
      list: true,
      description: 'Country of residence, accents and case ignored (`mexico` finds México).',
    },
    first_name: {
      column: 'first_name',
      op: 'eq',
      type: 'string',
      text: 'exact',
      description: 'Exact first name, as written (accents and case count; composed and decomposed accents are one text).',
    },
    last_name: {
      column: 'last_name',
      op: 'eq',
      type: 'string',
      text: 'exact',
      description: 'Exact last name, as written (accents and case count; composed and decomposed accents are one text).',
    },
    first_name_starts_with: {
      column: 'first_name',
      op: 'prefix',
      type: 'string',
      description: 'First name starts with the value, accents and case ignored (typeahead: `jo` finds João).',
    },
    last_name_starts_with: {
      column: 'last_name',
      op: 'prefix',
      type: 'string',
      description: 'Last name starts with the value, accents and case ignored (typeahead: `mul` finds Müller).',
    },
  },
  sortable: {
    id: { column: 'id', type: 'integer' },
    // Names as people read them (their collation keys: src/db/collation.ts); the country also has its fold.
    first_name: { column: 'first_name', type: 'string', key: true },
    last_name: { column: 'last_name', type: 'string', key: true },
    age: { column: 'age', type: 'integer' },
    status: { column: 'status', type: 'string' },
    country: { column: 'country', type: 'string', key: true, fold: true },
  },
};
