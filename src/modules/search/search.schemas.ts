import { Type, type Static } from '@sinclair/typebox';
import { Id } from '../../schemas.js';

const ONE_STYLE = 'One pagination style per request: page+size, offset+limit, page+pagesize or after+size (two at once is 400).';

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
    // The pagination of every list (query/page.ts): no defaults here, the first parameter given decides the style.
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: `Page number, 1-based (default 1), with size or pagesize. ${ONE_STYLE}` })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: `Hits per page, 1..100 (default 20), with page or after. ${ONE_STYLE}` })),
    pagesize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: `Alternative name for size (page+pagesize style). ${ONE_STYLE}` })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647, description: `Hits to skip (offset+limit style). ${ONE_STYLE}` })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: `Hits to return (offset+limit style). ${ONE_STYLE}` })),
    after: Type.Optional(
      Type.String({
        maxLength: 4096,
        pattern: '^([A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+)?$',
        description:
          'Cursor pagination (after+size): the hits after the cursor in the ranking; empty starts at the best hit. Link rel="next" carries the next cursor; a cursor belongs to its q. ' +
          "It holds the last hit's place in the ranking, which depends on that hit's own name only: following next while the catalogue changes shows every hit that matches throughout exactly once " +
          '(a hit created, renamed or deleted meanwhile may or may not appear). A cursor this search did not give (edited, or of another q) is 400. ' +
          ONE_STYLE,
        examples: [''],
      }),
    ),
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
    description: 'RFC 8288 links to the first, prev, next and last pages, with the same query (with after: first and next only).',
    examples: ['</search?q=ok&page=2&size=20>; rel="next"'],
  },
};
