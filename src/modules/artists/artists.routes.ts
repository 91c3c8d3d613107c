import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../../errors.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { Artist, ArtistListItem, ArtistParams, ArtistView, CreateArtistBody } from './artists.schemas.js';
import { childrenOf, type EmbedSpec } from '../../query/embed.js';
import type { Album } from '../albums/albums.schemas.js';
import { insertArtist, insertArtists, listArtists } from './artists.repository.js';
import { bulkBody, bulkCreated } from '../../http/bulk.js';
import { artistsCollection } from './artists.collection.js';
import { LIST_HEADERS, listQuery, listQuerystring, setListHeaders } from '../../query/index.js';
import { getArtist } from './artists.lifecycle.repository.js';
import { resourceEtag } from '../../http/etag.js';

const tags = ['artists'];
const ALBUMS_OF_ARTIST: EmbedSpec = { table: 'albums', parent: 'artist_id', columns: ['id', 'name', 'year', 'image'] };
const ids = (rows: readonly { id: number }[]) => rows.map((r) => r.id);

export const artistRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/artists', {
    config: { scope: 'write', idempotent: true },
    schema: {
      tags,
      operationId: 'createArtist',
      summary: 'Create an artist',
      description: 'Stores a new artist. `name` is stored trimmed; `image` must be an absolute http(s) URL.',
      body: bulkBody(CreateArtistBody),
      response: { 201: bulkCreated(Type.Ref(Artist), 'The created artist; `Location` is its path.'), ...errors(400, ...AUTH_ERRORS, 413, 415) },
    },
    handler: async (request, reply) => {
      if (Array.isArray(request.body)) return reply.code(201).send(await insertArtists(app.db, request.body));
      const artist = await insertArtist(app.db, request.body);
      reply.code(201).header('Location', `/artists/${artist.id}`);
      return artist;
    },
  });

  app.get('/artists', {
    config: { scope: 'read', cached: ['artists'] },
    schema: {
      tags,
      summary: 'List artists',
      description:
        'With embed=albums each artist carries its first albums. Filter by exact name, name prefix (name_starts_with) or full text (q); sort by id or name; paginate with page+size, offset+limit or page+pagesize.',
      querystring: listQuerystring(artistsCollection),
      response: { 200: Type.Array(ArtistListItem, { maxItems: 100, headers: LIST_HEADERS }), ...errors(400, ...AUTH_ERRORS) },
    },
    handler: async (request, reply) => {
      const plan = listQuery(artistsCollection, request.url);
      const { rows, total } = await listArtists(app.db, plan);
      setListHeaders(reply, '/artists', plan, total);
      if (plan.request.embed !== 'albums') return rows;
      const albums = await childrenOf<Album>(app.db as never, ALBUMS_OF_ARTIST, ids(rows));
      return rows.map((artist) => ({ ...artist, albums: albums.get(artist.id) ?? [] }));
    },
  });

  app.get('/artists/:artist_id', {
    config: { scope: 'read', cached: ['artists', 'albums'] },
    schema: {
      tags,
      operationId: 'getArtist',
      summary: 'Get an artist',
      description: 'The representation has name and image; the id is not part of it.',
      params: ArtistParams,
      response: { 200: Type.Ref(ArtistView, { description: 'The artist.' }), ...errors(400, ...AUTH_ERRORS, 404) },
    },
    handler: async (request, reply) => {
      const artist = await getArtist(app.db, request.params.artist_id);
      if (!artist) throw notFound('Artist');
      reply.header('ETag', resourceEtag('artist', artist.id, artist.version));
      return { name: artist.name, image: artist.image };
    },
  });
};
