import { Type, type Static } from '@sinclair/typebox';
import type { CollectionDef } from '../../query/index.js';

/**
 * Seeing an alias needs admin, in GET /aliases as in the events feed (alias events are admin-only,
 * events.schemas.ts): an alias is a stored filter over users, which are personal data, and the only
 * use of one, GET /users/{alias}, needs admin too.
 */
export const ALIAS_READ_SCOPE = 'admin' as const;

/** Collections that have an alias path (`/users/{alias}`), by the name used in /aliases (app.ts names them). */
export type AliasCollections = Readonly<Record<string, CollectionDef>>;

/** An alias name: lower-case words (letters, digits) joined by hyphens, starting with a letter. */
export const ALIAS_PATTERN = '^[a-z][a-z0-9]*(-[a-z0-9]+)*$';

export const Alias = Type.Object(
  {
    name: Type.String({ maxLength: 64, examples: ['young-brazilians'] }),
    collection: Type.String({ maxLength: 64, examples: ['users'] }),
    query: Type.String({
      maxLength: 2000,
      description: 'The filters the alias stands for, as a query string without `?`.',
      examples: ['status=active&lives_in=brazil&older_than=18&younger_than=35'],
    }),
  },
  { $id: 'Alias', title: 'Alias' },
);
export type Alias = Static<typeof Alias>;

export const AliasName = Type.String({
  pattern: ALIAS_PATTERN,
  maxLength: 64,
  'x-error-message': 'Must be lower-case words (letters, digits) joined by hyphens, starting with a letter.',
  description: 'Lower-case words joined by hyphens, e.g. `young-brazilians`.',
});

export const aliasParams = (collections: AliasCollections) =>
  Type.Object({
    collection: Type.String({ enum: Object.keys(collections), description: 'The collection the alias belongs to.' }),
    name: AliasName,
  });

export const PutAliasBody = Type.Object(
  {
    query: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: "Filter parameters of the collection, as a query string without `?`; checked as a request's would be.",
      examples: ['status=active&lives_in=[brazil,argentina]'],
    }),
  },
  { additionalProperties: false },
);
export type PutAliasBody = Static<typeof PutAliasBody>;
