import { Type, type Static } from '@sinclair/typebox';
import { Id } from '../../schemas.js';
import { EVENT_TYPES, SEQUENCE_LIMITS } from '../events/events.schemas.js';

const Types = Type.Array(Type.String({ enum: EVENT_TYPES }), {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The event types to deliver.',
  examples: [['album.created', 'album.updated', 'album.deleted']],
});

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({
      format: 'uri',
      maxLength: 2048,
      pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#@]+([/?#]|$)',
      'x-error-message': 'Must be an absolute http(s) URL without credentials.',
      description:
        'Where events are POSTed. Loopback, private, link-local and other non-public addresses are refused, when given and when the name resolves at each delivery (unless WEBHOOK_ALLOW_PRIVATE=on).',
    }),
    types: Types,
    secret: Type.String({
      minLength: 16,
      maxLength: 256,
      description: 'Shared secret the deliveries are signed with (HMAC-SHA256, see X-Catalogue-Signature). Never shown again.',
    }),
  },
  { additionalProperties: false, examples: [{ url: 'https://hooks.example.com/catalogue', types: ['album.created'], secret: 'a-long-random-shared-secret' }] },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const Webhook = Type.Object(
  {
    id: Id,
    url: Type.String({ maxLength: 2048 }),
    types: Types,
    status: Type.String({
      enum: ['active', 'failing'],
      description: '`failing`: an event failed WEBHOOK_MAX_ATTEMPTS times in a row; deliveries stopped there (recreate the webhook to start again).',
    }),
    last_sequence: Type.Integer({
      minimum: 0,
      ...SEQUENCE_LIMITS,
      description: 'Sequence of the last event handled (delivered, or not of its types). Deliveries start after the sequence current at creation.',
    }),
    attempts: Type.Integer({ minimum: 0, maximum: 100, format: 'int32', description: 'Failed attempts at the next event so far.' }),
    next_attempt_at: Type.String({ format: 'date-time', maxLength: 32 }),
    last_error: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]),
    created_at: Type.String({ format: 'date-time', maxLength: 32 }),
  },
  { $id: 'Webhook', title: 'Webhook' },
);
export type Webhook = Static<typeof Webhook>;

export const WebhookDelivery = Type.Object(
  {
    id: Id,
    sequence: Type.Integer({ minimum: 1, ...SEQUENCE_LIMITS }),
    event_id: Type.String({ maxLength: 32 }),
    type: Type.String({ enum: EVENT_TYPES }),
    attempt: Type.Integer({ minimum: 1, maximum: 100, format: 'int32', description: '1 for the first try of this event.' }),
    outcome: Type.String({ enum: ['delivered', 'failed'], description: 'delivered: the receiver answered 2xx.' }),
    status_code: Type.Union([Type.Integer({ minimum: 100, maximum: 599 }), Type.Null()], { description: 'Null when no answer came (refused, timeout).' }),
    error: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]),
    duration_ms: Type.Integer({ minimum: 0, maximum: 2147483647, format: 'int32' }),
    at: Type.String({ format: 'date-time', maxLength: 32 }),
  },
  { $id: 'WebhookDelivery', title: 'WebhookDelivery' },
);

export const WebhookParams = Type.Object({ webhook_id: Id });
export const DeliveriesQuery = Type.Object(
  { size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'How many of the latest attempts (default 50).' })) },
  { additionalProperties: false },
);
