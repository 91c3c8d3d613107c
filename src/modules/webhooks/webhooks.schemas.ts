import { Type, type Static } from '@sinclair/typebox';
import { Id } from '../../schemas.js';
import type { CollectionDef } from '../../query/index.js';
import { EVENT_TYPES, SEQUENCE_LIMITS } from '../events/events.schemas.js';

/** The most events one POST may carry. */
export const BATCH_MAX = 1000;

function BatchSize(defaulted: boolean) {
  return Type.Integer({
    minimum: 1,
    maximum: BATCH_MAX,
    ...(defaulted ? { default: 1 } : {}),
    format: 'int32',
    description: `The most events one POST carries. 1 (the default): each POST is one Event, as the \`catalogueEvent\` webhook describes. 2..${BATCH_MAX}: each POST is \`{"events": [...]}\`, 1 to batch_size events in sequence order, as \`catalogueEventBatch\` describes; whatever is waiting goes in the next POST, so a receiver that answers in time keeps up with any write rate.`,
  });
}

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
    batch_size: Type.Optional(BatchSize(true)),
  },
  {
    additionalProperties: false,
    examples: [{ url: 'https://hooks.example.com/catalogue', types: ['album.created'], secret: 'a-long-random-shared-secret', batch_size: 100 }],
  },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const Webhook = Type.Object(
  {
    id: Id,
    url: Type.String({ maxLength: 2048 }),
    types: Types,
    batch_size: Type.Integer({ minimum: 1, maximum: BATCH_MAX, format: 'int32', description: 'The most events one POST carries (1: one Event per POST).' }),
    status: Type.String({
      enum: ['active', 'failing'],
      description:
        '`failing`: a POST failed WEBHOOK_MAX_ATTEMPTS times in a row; deliveries stopped there. `PATCH` with `{"status": "active"}` resumes after `last_sequence`.',
    }),
    last_sequence: Type.Integer({
      minimum: 0,
      ...SEQUENCE_LIMITS,
      description:
        'Sequence of the last event handled (delivered, or not of its types): deliveries go on with the next one. Starts at the sequence current at creation; `PATCH` with `from` moves it.',
    }),
    attempts: Type.Integer({ minimum: 0, maximum: 100, format: 'int32', description: 'Failed attempts at the next POST so far.' }),
    next_attempt_at: Type.String({ format: 'date-time', maxLength: 32 }),
    last_error: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]),
    created_at: Type.String({ format: 'date-time', maxLength: 32 }),
  },
  { $id: 'Webhook', title: 'Webhook' },
);
export type Webhook = Static<typeof Webhook>;

export const PatchWebhookBody = Type.Object(
  {
    status: Type.Optional(
      Type.String({
        enum: ['active'],
        description:
          '`active`: deliveries go on at once after `last_sequence` (a `failing` webhook resumes; one waiting for a retry tries now), with WEBHOOK_MAX_ATTEMPTS attempts again.',
      }),
    ),
    from: Type.Optional(
      Type.Integer({
        minimum: 1,
        ...SEQUENCE_LIMITS,
        description:
          "Deliveries go on with the first event of the webhook's types whose sequence is at least this: earlier to send events again, later to skip them. At most one more than the newest event; not before the oldest event still kept (EVENTS_RETENTION_DAYS). Does not change `status`.",
      }),
    ),
    batch_size: Type.Optional(BatchSize(false)),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'What to change; at least one field.',
    examples: [{ status: 'active' }, { status: 'active', from: 1200 }],
  },
);
export type PatchWebhookBody = Static<typeof PatchWebhookBody>;

export const WebhookDelivery = Type.Object(
  {
    id: Id,
    sequence: Type.Integer({ minimum: 1, ...SEQUENCE_LIMITS, description: 'The first event the POST carried.' }),
    last_sequence: Type.Integer({ minimum: 1, ...SEQUENCE_LIMITS, description: 'The last event the POST carried (`sequence` for one event).' }),
    events: Type.Integer({ minimum: 1, maximum: BATCH_MAX, format: 'int32', description: 'How many events the POST carried.' }),
    event_id: Type.String({ maxLength: 32, description: 'The id of the first event the POST carried.' }),
    type: Type.String({ enum: EVENT_TYPES, description: 'The type of the first event the POST carried.' }),
    attempt: Type.Integer({ minimum: 1, maximum: 100, format: 'int32', description: '1 for the first try of a POST starting at this event.' }),
    outcome: Type.String({ enum: ['delivered', 'failed'], description: 'delivered: the receiver answered 2xx.' }),
    status_code: Type.Union([Type.Integer({ minimum: 100, maximum: 599 }), Type.Null()], { description: 'Null when no answer came (refused, timeout).' }),
    error: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]),
    duration_ms: Type.Integer({ minimum: 0, maximum: 2147483647, format: 'int32' }),
    at: Type.String({ format: 'date-time', maxLength: 32 }),
  },
  { $id: 'WebhookDelivery', title: 'WebhookDelivery' },
);

export const WebhookParams = Type.Object({ webhook_id: Id });

/** GET /webhooks/{id}/deliveries: the attempts, newest first; paginated as every list is. */
export const deliveriesCollection: CollectionDef = {
  name: 'webhook-deliveries',
  filters: {},
  sortable: { id: { column: 'id', type: 'integer' } },
  defaultSort: [{ field: 'id', direction: 'desc' }],
};
