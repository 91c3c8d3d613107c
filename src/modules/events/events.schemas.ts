import { Type, type Static } from '@sinclair/typebox';
import type { Scope } from '../../auth/scopes.js';
import { ALIAS_READ_SCOPE } from '../aliases/aliases.schemas.js';

import { EVENT_TYPES } from './events.contract.js';

// The types, fields and paths of events: events.contract.ts. Here: how they are asked for and shown.
export { EVENT_TYPES };

/**
 * The scope that sees a resource's events: users are personal data (admin, as GET /users needs), an
 * alias is seen where GET /aliases lists it (ALIAS_READ_SCOPE); the catalogue is `read`.
 */
const RESOURCE_SCOPES = new Map<string, Scope>([
  ['user', 'admin'],
  ['alias', ALIAS_READ_SCOPE],
]);
export const eventScope = (type: string): Scope => RESOURCE_SCOPES.get(type.slice(0, type.indexOf('.'))) ?? 'read';

/** A position in the feed: 64-bit on PostgreSQL, kept to what a JSON number carries exactly. */
export const SEQUENCE_LIMITS = { maximum: Number.MAX_SAFE_INTEGER, format: 'int64' } as const;

export const EventSchema = Type.Object(
  {
    id: Type.String({ maxLength: 32, description: 'Unique identifier of the event (32 hex digits): the key for a receiver that deduplicates.' }),
    sequence: Type.Integer({
      minimum: 1,
      ...SEQUENCE_LIMITS,
      description:
        'Position in the database’s total order of events: strictly increasing, and no reader ever sees an event before every earlier one has committed. Resume after it with `after` or `Last-Event-ID`.',
    }),
    type: Type.String({ enum: EVENT_TYPES, description: '`<resource>.<created|updated|deleted>`.' }),
    path: Type.String({ maxLength: 300, description: 'Where the resource lives in this API.', examples: ['/artists/1/albums/2'] }),
    resource: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'Created or updated: the resource as GET returns it (Artist, Album, Song, User, Alias, with its `id`). Deleted: `{"id": n}` (an alias: `{"name", "collection"}`). Deleting an album or artist also records the deletion of each song and album it held, before its own.',
      },
    ),
    at: Type.String({ format: 'date-time', maxLength: 32, description: 'When the change was written (UTC).' }),
  },
  {
    $id: 'Event',
    title: 'Event',
    examples: [
      {
        id: '6f1c2a9e0b7d4c3f8a5e1d2c3b4a5f60',
        sequence: 42,
        type: 'album.updated',
        path: '/artists/1/albums/2',
        resource: { id: 2, name: 'OK Computer', year: 1997, image: 'https://img.example.com/okc.jpg' },
        at: '2026-11-24T14:00:00.000Z',
      },
    ],
  },
);

export const TypesParam = Type.String({
  maxLength: 400,
  pattern: `^(${EVENT_TYPES.join('|').replaceAll('.', '\\.')})(,(${EVENT_TYPES.join('|').replaceAll('.', '\\.')}))*$`,
  'x-error-message': `Must be a comma-separated list of event types: ${EVENT_TYPES.join(', ')}.`,
  description: 'Only these event types, comma-separated (e.g. `album.created,album.updated`). Omitted: every type the token may see.',
});

export const EventsQuery = Type.Object(
  {
    after: Type.Optional(
      Type.Integer({
        minimum: 0,
        ...SEQUENCE_LIMITS,
        default: 0,
        description: 'Return events with a sequence greater than this (default 0: from the oldest kept).',
      }),
    ),
    types: Type.Optional(TypesParam),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Events per page, 1..1000 (default 100).' })),
  },
  { additionalProperties: false },
);
export type EventsQuery = Static<typeof EventsQuery>;

export const StreamQuery = Type.Object(
  {
    after: Type.Optional(
      Type.Integer({
        minimum: 0,
        ...SEQUENCE_LIMITS,
        description: 'Start after this sequence (`Last-Event-ID`, when sent, wins). Omitted: only events from now on.',
      }),
    ),
    types: Type.Optional(TypesParam),
  },
  { additionalProperties: false },
);
export type StreamQuery = Static<typeof StreamQuery>;

export const FeedHeaders = {
  Link: {
    type: 'string',
    maxLength: 4096,
    description:
      'RFC 8288 link to the next page (rel="next": `after` the last sequence of this page, same `types` and `size`). Following it when it comes back empty is polling.',
    examples: ['</events?after=142&size=100>; rel="next"'],
  },
  'X-Last-Sequence': {
    type: 'integer',
    minimum: 0,
    ...SEQUENCE_LIMITS,
    description: 'The sequence to resume after: the last event on this page, or `after` when the page is empty.',
    examples: [142],
  },
};
