import { ARTISTS } from '../artists/artists.table.js';
import { ALBUMS } from '../albums/albums.table.js';
import { SONGS } from '../songs/songs.table.js';
import { USERS } from '../users/users.table.js';
import { ALIASES } from '../aliases/aliases.table.js';

// The event contract, stated once: which tables' writes are events, their types, what each carries
// and where its resource lives. Read by the schemas (events.schemas.ts: the `type` enum, `types=`,
// the webhooks' types, the CLI).
//
// The triggers that record events are made by migrations (20261124T0800_events.ts: every writer is
// covered, in the writing transaction; docs/events.md), each with the field lists of its day written
// out: a migration never changes what it does when this module changes. A migration that changes a
// resource's fields remakes its triggers with the new list; test/events/contract.test.ts holds the
// events the migrated database records to this module (types, fields, deletions, paths, cascades).

/** Every resource whose creates, updates and deletes are recorded, with its table module. */
export const EVENT_SOURCES = [ARTISTS, ALBUMS, SONGS, USERS, ALIASES] as const;

export type EventResource = (typeof EVENT_SOURCES)[number]['event']['type'];

export const EVENT_VERBS = ['created', 'updated', 'deleted'] as const;

/** `<resource>.<verb>`, every one. */
export const EVENT_TYPES: string[] = EVENT_SOURCES.flatMap((t) => EVENT_VERBS.map((verb) => `${t.event.type}.${verb}`));

/**
 * Where a resource lives in the API, the `path` of its events: `{column}` is the row's column (a song's
 * `artist_id` is its album's).
 */
export const EVENT_PATHS: Record<EventResource, string> = {
  artist: '/artists/{id}',
  album: '/artists/{artist_id}/albums/{id}',
  song: '/artists/{artist_id}/albums/{album_id}/songs/{id}',
  user: '/users/{id}',
  alias: '/aliases/{collection}/{name}',
};

/** Deleting one of these records first the deletion of each row under it (an artist's albums and their songs, an album's songs). */
export const EVENT_CASCADES: Partial<Record<EventResource, readonly EventResource[]>> = {
  artist: ['song', 'album'],
  album: ['song'],
};
