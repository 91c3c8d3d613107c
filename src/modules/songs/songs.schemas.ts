import { Type, type Static } from '@sinclair/typebox';
import { Id, NameString } from '../../schemas.js';

export const Song = Type.Object(
  { id: Id, name: Type.String({ maxLength: 200 }), time: Type.String({ maxLength: 5, examples: ['03:45'] }) },
  { $id: 'Song', title: 'Song', examples: [{ id: 1, name: 'Airbag', time: '04:44' }] },
);
export type Song = Static<typeof Song>;

export const SongTime = Type.String({
  pattern: '^[0-9]{2}:[0-5][0-9]$',
  maxLength: 5,
  'x-error-message': 'Must be mm:ss: two digits, a colon, two digits (seconds 00-59).',
  description: 'Duration mm:ss.',
  examples: ['03:45'],
});

export const CreateSongBody = Type.Object(
  { name: NameString(200, 'Song name, not blank, 1..200 characters as sent; stored trimmed.'), time: SongTime },
  { additionalProperties: false, examples: [{ name: 'Airbag', time: '04:44' }] },
);
export type CreateSongBody = Static<typeof CreateSongBody>;

/** GET .../albums/{album_id}/songs: the album with its songs. */
export const AlbumWithSongs = Type.Object(
  {
    name: Type.String({ maxLength: 200 }),
    year: Type.Integer({ minimum: 1000, maximum: 9999 }),
    image: Type.String({ maxLength: 2048 }),
    songs: Type.Array(Type.Ref(Song), { maxItems: 100, description: 'One page of songs (at most 100).' }),
  },
  { $id: 'AlbumWithSongs', title: 'AlbumWithSongs' },
);

/** PATCH .../songs/{song_id}: any of the create fields, same rules; at least one; nothing else. */
export const UpdateSongBody = Type.Partial(CreateSongBody, { minProperties: 1, additionalProperties: false });
export type UpdateSongBody = Static<typeof UpdateSongBody>;

export const SongParams = Type.Object({ artist_id: Id, album_id: Id, song_id: Id });
/** Where a song is addressed: under its own album, itself under its own artist. */
export type SongKey = Static<typeof SongParams>;
