import { Type, type Static } from '@sinclair/typebox';
import { Id } from '../../schemas.js';

export const SEARCH_MAX_QUERY = 200;

export const SearchQuery = Type.Object(
  {
    q: Type.String({
      minLength: 1,
      maxLength: SEARCH_MAX_QUERY,
      // Words are the runs of letters and digits: a q without one has nothing to search for.
      pattern: '[\\p{L}\\p{N}]',
      'x-error-message': 'Must contain at least one letter or digit.',
      description:
        'Words to find in artist, album and song names; every word must match (as a prefix, ignoring case and accents). Words are runs of letters and digits (at most 16 are used); q must hold at least one.',
      examples: ['ok comp'],
    }),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, 1-based (default 1).' })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Hits per page, 1..100 (default 20).' })),
  },
  { additionalProperties: false },
);
export type SearchQuery = Static<typeof SearchQuery>;

export const SearchHit = Type.Object(
  {
    kind: Type.Union([Type.Literal('artist'), Type.Literal('album'), Type.Literal('song')], { description: 'What was found.' }),
    id: Id,
    name: Type.String({ maxLength: 200 }),
    path: Type.String({ maxLength: 100, description: 'Where the resource lives in this API.', examples: ['/artists/1/albums/2'] }),
  },
  {
    $id: 'SearchHit',
    title: 'SearchHit',
    examples: [{ kind: 'album', id: 2, name: 'OK Computer', path: '/artists/1/albums/2' }],
  },
);
export type SearchHit = Static<typeof SearchHit>;

/** Response headers of a page of hits, for the OpenAPI document. */
export const PageHeaders = {
  'X-Total-Count': { type: 'integer', minimum: 0, maximum: 2147483647, description: 'Number of hits over all pages.', examples: [42] },
  Link: {
    type: 'string',
    maxLength: 4096,
    description: 'RFC 8288 links to the first, prev, next and last pages, with the same query.',
    examples: ['</search?q=ok&page=2&size=20>; rel="next"'],
  },
};
