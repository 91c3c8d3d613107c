import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { badRequest } from '../../errors/index.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { PageHeaders, SearchHit, SearchQuery } from './search.schemas.js';
import { search, searchTerms } from './search.repository.js';

/** RFC 8288 links to the first, previous, next and last pages, keeping the query. */
function pageLinks(q: string, page: number, size: number, total: number): string {
  const last = Math.max(1, Math.ceil(total / size));
  const link = (p: number, rel: string) => `</search?${new URLSearchParams({ q, page: String(p), size: String(size) }).toString()}>; rel="${rel}"`;
  const links = [link(1, 'first')];
  if (page > 1) links.push(link(Math.min(page - 1, last), 'prev'));
  if (page < last) links.push(link(page + 1, 'next'));
  links.push(link(last, 'last'));
  return links.join(', ');
}

export const searchRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/search', {
    config: { scope: 'read', cached: ['artists', 'albums', 'songs'] },
    schema: {
      tags: ['search'],
      operationId: 'search',
      summary: 'Search artist, album and song names',
      description:
        'Full-text search over names. Every word of `q` must match the start of a word in the name, ignoring case and accents. ' +
        'Hits are ranked best first (ties by kind, then id) and paginated with `page` and `size`; `X-Total-Count` gives the number of hits.',
      querystring: SearchQuery,
      response: {
        200: Type.Array(Type.Ref(SearchHit), { maxItems: 100, description: 'One page of hits, best first.', headers: PageHeaders }),
        ...errors(400, ...AUTH_ERRORS),
      },
    },
    handler: async (request, reply) => {
      const { q, page = 1, size = 20 } = request.query; // the defaults are the schema's, filled in by validation
      const terms = searchTerms(q);
      if (terms.length === 0) throw badRequest([{ field: 'q', invalid: 'Must contain at least one letter or digit.' }]);
      const { hits, total } = await search(app.db, terms, size, (page - 1) * size);
      reply.header('X-Total-Count', String(total)).header('Link', pageLinks(q, page, size, total));
      return hits;
    },
  });
};
