import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { childrenOf, type EmbedSpec } from '../../query/embed.js';
import type { Album } from '../albums/albums.schemas.js';
import { ALBUMS } from '../albums/albums.table.js';
import { bulkBody, bulkCreated } from '../../http/bulk.js';
import { LIST_HEADERS, listQuery, listQuerystring, setListHeaders } from '../../query/index.js';
import { addVersionedRoutes, withoutVersion, type VersionedResource } from '../versioned-resource.js';
import { Artist, ArtistListItem, ArtistParams, ArtistView, CreateArtistBody, UpdateArtistBody, type ArtistKey } from './artists.schemas.js';
import { artistPath, createArtist, createArtists, getArtist, listArtists, updateArtist, type VersionedArtist } from './artists.repository.js';
import { artistsCollection } from './artists.collection.js';

const tags = ['artists'];
const ALBUMS_OF_ARTIST: EmbedSpec = { table: ALBUMS.table, parent: ALBUMS.parent, columns: ALBUMS.fields };
const ids = (rows: readonly { id: number }[]) => rows.map((r) => r.id);

/** One artist: read it, edit it, remove it with its albums and their songs. ETags come from the row version. */
const artistResource: VersionedResource<ArtistKey, VersionedArtist, UpdateArtistBody> = {
  url: '/artists/:artist_id',
  params: ArtistParams,
  tags,
  etagKind: 'artist',
  writeScope: 'write',
  path: artistPath,
  id: (at) => at.artist_id,
  get: getArtist,
  update: updateArtist,
  view: withoutVersion,
  read: {
    scope: 'read',
    operationId: 'getArtist',
    summary: 'Get an artist',
    description: 'The representation has name and image; the id is not part of it.',
    response: Type.Ref(ArtistView, { description: 'The artist.' }),
    view: ({ id: _id, version: _version, ...artist }) => artist,
  },
  edit: {
    summary: 'Update an artist',
    description: 'Partial update: send any of name, image (same rules as on create). Answers the whole artist.',
    body: UpdateArtistBody,
    response: Type.Ref(Artist),
  },
  delete: { summary: 'Delete an artist with its albums and their songs' },
};

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
      const { body } = request;
      if (Array.isArray(body)) return reply.created((db) => createArtists(db, body));
      return reply.created(
        (db) => createArtist(db, body),
        (artist) => `/artists/${artist.id}`,
      );
    },
  });

  app.get('/artists', {
    config: { scope: 'read', cached: true },
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
      const { rows, ...found } = await listArtists(app.db, plan);
      setListHeaders(reply, '/artists', plan, found);
      if (plan.request.embed !== 'albums') return rows;
      const albums = await childrenOf<Album>(app.db as never, ALBUMS_OF_ARTIST, ids(rows));
      return rows.map((artist) => ({ ...artist, albums: albums.get(artist.id) ?? [] }));
    },
  });

  addVersionedRoutes(app, artistResource);
};
