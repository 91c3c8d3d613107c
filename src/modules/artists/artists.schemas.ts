import { Type, type Static } from '@sinclair/typebox';
import { Id, ImageUrl, NameString } from '../../schemas.js';
import { Album } from '../albums/albums.schemas.js';
import { EMBED_MAX_PER_PARENT } from '../../query/embed.js';

const name = NameString(200, 'Artist name, not blank, 1..200 characters as sent; stored trimmed.');

export const Artist = Type.Object(
  { id: Id, name: Type.String({ maxLength: 200 }), image: Type.String({ maxLength: 2048 }) },
  { $id: 'Artist', title: 'Artist', examples: [{ id: 1, name: 'Radiohead', image: 'https://img.example.com/radiohead.jpg' }] },
);
export type Artist = Static<typeof Artist>;

/** GET /artists/{artist_id}: the interface document's representation, without the id. */
export const ArtistView = Type.Object(
  { name: Type.String({ maxLength: 200 }), image: Type.String({ maxLength: 2048 }) },
  {
    $id: 'ArtistView',
    title: 'ArtistView',
    examples: [{ name: 'Radiohead', image: 'https://img.example.com/radiohead.jpg' }],
  },
);

export const CreateArtistBody = Type.Object(
  { name, image: ImageUrl },
  { additionalProperties: false, examples: [{ name: 'Radiohead', image: 'https://img.example.com/radiohead.jpg' }] },
);
export type CreateArtistBody = Static<typeof CreateArtistBody>;

export const ArtistParams = Type.Object({ artist_id: Id });
/** Where an artist is addressed: the path parameters of /artists/{artist_id}. */
export type ArtistKey = Static<typeof ArtistParams>;

/** PATCH /artists/{artist_id}: any of the create fields, same rules; at least one; nothing else. */
export const UpdateArtistBody = Type.Partial(CreateArtistBody, { minProperties: 1, additionalProperties: false });
export type UpdateArtistBody = Static<typeof UpdateArtistBody>;

/** An item of GET /artists: the artist, with `albums` when embed=albums asks for them. */
export const ArtistListItem = Type.Object({
  ...Artist.properties,
  albums: Type.Optional(
    Type.Array(Type.Ref(Album), { maxItems: EMBED_MAX_PER_PARENT, description: `With embed=albums: the artist's first ${EMBED_MAX_PER_PARENT} albums by id.` }),
  ),
});
