import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { Id } from '../schemas.js';
import { validationDetails, type ErrorDetail } from '../errors/index.js';
import { makeAjv } from '../validation.js';
import { CreateArtistBody } from '../modules/artists/artists.schemas.js';
import { CreateAlbumBody } from '../modules/albums/albums.schemas.js';
import { CreateSongBody } from '../modules/songs/songs.schemas.js';

// One NDJSON line per record: the API's own create schemas plus the ids that tie the catalogue together.

export const ArtistRecord = Type.Object({ type: Type.Literal('artist'), id: Id, ...CreateArtistBody.properties }, { additionalProperties: false });
export const AlbumRecord = Type.Object({ type: Type.Literal('album'), id: Id, artist_id: Id, ...CreateAlbumBody.properties }, { additionalProperties: false });
export const SongRecord = Type.Object({ type: Type.Literal('song'), id: Id, album_id: Id, ...CreateSongBody.properties }, { additionalProperties: false });

export type ArtistRecord = Static<typeof ArtistRecord>;
export type AlbumRecord = Static<typeof AlbumRecord>;
export type SongRecord = Static<typeof SongRecord>;
export type CatalogueRecord = ArtistRecord | AlbumRecord | SongRecord;

export const RECORD_TYPES = ['artist', 'album', 'song'] as const;

let compiled: Record<string, ValidateFunction> | undefined;

/** Compiled on first use: the CLI loads this module for every command, `serve` included. */
function validators(): Record<string, ValidateFunction> {
  if (!compiled) {
    const ajv = makeAjv(false); // as request bodies: no coercion ("1997" is not a year)
    compiled = {
      artist: ajv.compile(ArtistRecord as TSchema),
      album: ajv.compile(AlbumRecord as TSchema),
      song: ajv.compile(SongRecord as TSchema),
    };
  }
  return compiled;
}

/** The record, or the details of every rule it breaks (same texts as the API's 400 details). */
export function checkRecord(value: unknown): { record: CatalogueRecord } | { details: ErrorDetail[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { details: [{ field: 'record', type: 'Must be object.' }] };
  }
  const type = (value as { type?: unknown }).type;
  const validate = typeof type === 'string' && Object.hasOwn(validators(), type) ? validators()[type] : undefined;
  if (!validate) {
    const detail: ErrorDetail =
      type === undefined
        ? { field: 'type', required: 'Missing data for required field.' }
        : { field: 'type', enum: `Must be one of: ${RECORD_TYPES.join(', ')}.` };
    return { details: [detail] };
  }
  if (validate(value)) return { record: value as CatalogueRecord };
  return { details: validationDetails((validate.errors ?? []) as Parameters<typeof validationDetails>[0], 'body') };
}

export function describeDetail(detail: ErrorDetail): string {
  const { field, ...rule } = detail;
  return `${field}: ${Object.values(rule).join(' ')}`;
}
