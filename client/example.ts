// A small, real client of the API: types generated from the OpenAPI document (client/schema.d.ts,
// `npm run client:generate`) and openapi-fetch. Paths, parameters, bodies and responses are all
// checked by the compiler against the document the service serves.
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type CatalogueClient = Client<paths>;
export type ErrorBody = components['schemas']['ErrorBody'];

export function catalogueClient(baseUrl: string, token: string): CatalogueClient {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
}

/** Turns an error response into an exception carrying the standard error body. */
function must<T>(result: { data?: T; error?: ErrorBody; response: Response }): T {
  if (result.data === undefined) {
    const e = result.error;
    throw new Error(`${result.response.status} ${e?.code ?? ''}: ${e?.message ?? 'no body'}`);
  }
  return result.data;
}

/** A creating POST answers one item for one item sent (an array only for an array body: bulk create). */
function single<T>(created: T | T[]): T {
  if (Array.isArray(created)) throw new Error('expected one created item');
  return created;
}

/** Creates an artist, one album and one song, then reads all three back. */
export async function catalogueTour(api: CatalogueClient) {
  const artist = single(must(await api.POST('/artists', { body: { name: 'Low', image: 'https://img.example.com/low.jpg' } })));
  const artistPath = { artist_id: artist.id };
  const album = single(
    must(
      await api.POST('/artists/{artist_id}/albums', {
        params: { path: artistPath },
        body: { name: 'Things We Lost in the Fire', year: 2001, image: 'https://img.example.com/twlitf.jpg' },
      }),
    ),
  );
  const albumPath = { artist_id: artist.id, album_id: album.id };
  const song = single(
    must(
      await api.POST('/artists/{artist_id}/albums/{album_id}/songs', {
        params: { path: albumPath },
        body: { name: 'Sunflower', time: '04:35' },
      }),
    ),
  );

  const artistView = must(await api.GET('/artists/{artist_id}', { params: { path: artistPath } }));
  const withAlbums = must(await api.GET('/artists/{artist_id}/albums', { params: { path: artistPath } }));
  const withSongs = must(await api.GET('/artists/{artist_id}/albums/{album_id}/songs', { params: { path: albumPath } }));
  return { artist, album, song, artistView, withAlbums, withSongs };
}
