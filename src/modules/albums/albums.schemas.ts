import { Type, type Static } from '@sinclair/typebox';
import { Id, ImageUrl, NameString } from '../../schemas.js';
import { Song } from '../songs/songs.schemas.js';
import { EMBED_MAX_PER_PARENT } from '../../query/embed.js';

export const Album = Type.Object(
  { id: Id, name: Type.String({ maxLength: 200 }), year: Type.Integer({ minimum: 1000, maximum: 9999 }), image: Type.String({ maxLength: 2048 }) },
  { $id: 'Album', title: 'Album', examples: [{ id: 1, name: 'OK Computer', year: 1997, image: 'https://img.example.com/okc.jpg' }] },
);
export type Album = Static<typeof Album>;

export const CreateAlbumBody = Type.Object(
  {
    name: NameString(200, 'Album name, not blank, 1..200 characters as sent; stored trimmed.'),
    year: Type.Integer({ minimum: 1000, maximum: 9999, description: 'Release year.' }),
    image: ImageUrl,
  },
  { additionalProperties: false, examples: [{ name: 'OK Computer', year: 1997, image: 'https://img.example.com/okc.jpg' }] },
);
export type CreateAlbumBody = Static<typeof CreateAlbumBody>;

/** GET /artists/{artist_id}/albums: the artist with its albums. */
export const ArtistWithAlbums = Type.Object(
  {
    name: Type.String({ maxLength: 200 }),
    image: Type.String({ maxLength: 2048 }),
    albums: Type.Array(
      Type.Object({
        ...Album.properties,
        songs: Type.Optional(
          Type.Array(Type.Ref(Song), {
            maxItems: EMBED_MAX_PER_PARENT,
            description: `With embed=songs: the album's first ${EMBED_MAX_PER_PARENT} songs by id.`,
          }),
        ),
      }),
      { maxItems: 100, description: 'One page of albums (at most 100).' },
    ),
  },
  { $id: 'ArtistWithAlbums', title: 'ArtistWithAlbums' },
);

export const AlbumParams = Type.Object({ artist_id: Id, album_id: Id });
/** Where an album is addressed: under its own artist. */
export type AlbumKey = Static<typeof AlbumParams>;

/** PATCH .../albums/{album_id}: any of the create fields, same rules; at least one; nothing else. */
export const UpdateAlbumBody = Type.Partial(CreateAlbumBody, { minProperties: 1, additionalProperties: false });
export type UpdateAlbumBody = Static<typeof UpdateAlbumBody>;
