import { Type, type Static } from '@sinclair/typebox';
import { SCOPES } from '../../auth/scopes.js';
import { Id } from '../../schemas.js';

export const ScopeSchema = Type.Union(
  SCOPES.map((s) => Type.Literal(s)),
  {
    description: 'admin implies write implies read; metrics reads GET /metrics only (admin may too).',
  },
);

const ExpiresAt = Type.Union([Type.String({ format: 'date-time', maxLength: 64 }), Type.Null()], {
  description: 'When the token stops working (401 after it); null: never.',
});

export const CreateTokenBody = Type.Object(
  {
    scopes: Type.Array(Type.String({ enum: [...SCOPES] }), {
      minItems: 1,
      maxItems: SCOPES.length,
      uniqueItems: true,
      description: 'admin implies write implies read; metrics reads GET /metrics and nothing else.',
    }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A label to recognise the token by.' })),
    expires_at: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 64,
        description:
          'When the token stops working: an RFC 3339 date-time with a time zone (`Z` or `±hh:mm`; `-00:00` is UTC; `T` or a space between date and time), in the future and at most 9999-12-31T23:59:59Z, stored in UTC to the millisecond (further digits are dropped). A time not in the future is 400: such a token could never be used. A leap second (`23:59:60`, only where one can fall) is read as `23:59:59` with its fraction, the earlier of the two readings, since stored times have no 61st second. Omitted: it never expires.',
        examples: ['2027-01-31T00:00:00Z'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateTokenBody = Static<typeof CreateTokenBody>;

export const TokenInfo = Type.Object(
  {
    id: Id,
    name: Type.Union([Type.String({ maxLength: 100 }), Type.Null()]),
    scopes: Type.Array(Type.String({ enum: [...SCOPES] }), { maxItems: SCOPES.length }),
    created_at: Type.String({ format: 'date-time', maxLength: 64 }),
    expires_at: ExpiresAt,
  },
  { $id: 'TokenInfo', title: 'TokenInfo' },
);

export const CreatedToken = Type.Object(
  {
    id: Id,
    token: Type.String({ maxLength: 64, description: 'The secret. Shown only in this response; store it now.' }),
    scopes: Type.Array(Type.String({ enum: [...SCOPES] }), { maxItems: SCOPES.length }),
    name: Type.Union([Type.String({ maxLength: 100 }), Type.Null()]),
    expires_at: ExpiresAt,
  },
  { $id: 'CreatedToken', title: 'CreatedToken' },
);

export const TokenParams = Type.Object({ token_id: Id });
