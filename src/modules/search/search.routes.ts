import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { badRequest, type ErrorDetail } from '../../errors/index.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { PageHeaders, SearchHit, SearchQuery } from './search.schemas.js';
import { search, searchTerms, type SearchAfter } from './search.repository.js';
import { linkHeader, queryStringOf, type ListPlan } from '../../query/index.js';
import { parseQueryString } from '../../query/parse.js';
import { PAGE_PARAMS, readPage } from '../../query/page.js';
import { decodeCursor, encodeCursor } from '../../query/cursor.js';

const CURSOR_KEYS = [{ string: false }, { string: false }, { string: false }, { string: false }];

// Signed (cursor.ts) but not secret: values that no hit can have are refused, as an edited cursor is.
const NOT_A_HIT_KEY = 'Not a cursor this search gave: use the after= of a Link next of the same q, unchanged, or after= (empty) to start.';

/** A key a hit can have (search.repository.ts): quality 0-3, a length, kind code 1-3, an id. */
const isHitKey = ([quality, length, code, id]: SearchAfter) => quality >= 0 && quality <= 3 && length >= 0 && code >= 1 && code <= 3 && id >= 1;

/**
 * The page the request asks for, in any of the list styles (query/page.ts), read from the query as
 * sent (the first pagination parameter decides the style); the schema has checked each value.
 */
function searchPage(url: string, terms: string[]): { plan: ListPlan; after?: SearchAfter; scope: string } {
  const { params } = parseQueryString(queryStringOf(url));
  const details: ErrorDetail[] = [];
  const page = readPage(
    params.filter((p) => PAGE_PARAMS.has(p.key)),
    details,
  );
  const scope = `search|${JSON.stringify(terms)}`;
  let after: SearchAfter | undefined;
  if (page.cursor) {
    const read = decodeCursor(page.cursor, scope, CURSOR_KEYS);
    if (!read.ok) details.push(read.detail);
    else if (!isHitKey(read.values as SearchAfter)) details.push({ field: 'after', invalid: NOT_A_HIT_KEY });
    else after = read.values as SearchAfter;
  }
  if (details.length > 0) throw badRequest(details, 'Request validation failed.');
  const kept = params.filter((p) => !PAGE_PARAMS.has(p.key));
  return { plan: { request: { collection: 'search', filters: [], sort: [], page, kept }, filters: [] }, after, scope };
}

export const searchRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/search', {
    config: { scope: 'read', cached: true },
    schema: {
      tags: ['search'],
      operationId: 'search',
      summary: 'Search artist, album and song names',
      description:
        'Full-text search over names. Every word of `q` must match the start of a word in the name, ignoring case and accents. ' +
        'Hits are ranked best first: names that are `q` itself, then names starting with the words of `q`, then names starting with them ' +
        'with the last word cut short, then the other hits; within each, shorter names first, then artists, albums, songs, then by id. ' +
        "A hit's rank depends on its own name only, never on the other hits, so a cursor (`after`) stays put while the catalogue changes. " +
        'Paginated with `page` and `size`, or `after` and `size`; `X-Total-Count` gives the number of hits.',
      querystring: SearchQuery,
      response: {
        200: Type.Array(Type.Ref(SearchHit), { maxItems: 100, description: 'One page of hits, best first.', headers: PageHeaders }),
        ...errors(400, ...AUTH_ERRORS),
      },
    },
    handler: async (request, reply) => {
      const terms = searchTerms(request.query.q);
      if (terms.length === 0) throw badRequest([{ field: 'q', invalid: 'Must contain at least one letter or digit.' }]);
      const { plan, after, scope } = searchPage(request.url, terms);
      const { limit, offset, style } = plan.request.page;
      // A cursor page reads one hit more, to know whether another page follows.
      const { hits, total, keys } = await search(app.db, terms, style === 'cursor' ? limit + 1 : limit, offset, after);
      let next: string | undefined;
      if (style === 'cursor' && hits.length > limit) {
        hits.length = limit;
        next = encodeCursor(scope, keys[limit - 1]!);
      }
      reply.header('X-Total-Count', String(total)).header('Link', linkHeader('/search', plan, next === undefined ? { total } : { total, next }));
      return hits;
    },
  });
};
