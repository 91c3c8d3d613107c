import { Type, type Static } from '@sinclair/typebox';
import { SCOPES } from '../../auth/scopes.js';
import { Id } from '../../schemas.js';

export const ScopeSchema = Type.Union(SCOPES.map((s) => Type.Literal(s)), {
  description: 'admin implies write implies read.',
});

export const CreateTokenBody = Type.Object(
  {
    scopes: Type.Array(Type.String({ enum: [...SCOPES] }), { minItems: 1, maxItems: 3, uniqueItems: true }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A label to recognise the token by.' })),
  },
  { additionalProperties: false },
);
export type CreateTokenBody = Static<typeof CreateTokenBody>;

export const TokenInfo = Type.Object(
  {
    id: Id,
    name: Type.Union([Type.String({ maxLength: 100 }), Type.Null()]),
    scopes: Type.Array(Type.String({ enum: [...SCOPES] }), { maxItems: 3 }),
    created_at: Type.String({ format: 'date-time', maxLength: 64 }),
  },
  { $id: 'TokenInfo', title: 'TokenInfo' },
);

export const CreatedToken = Type.Object(
  {
    id: Id,
    token: Type.String({ maxLength: 64, description: 'The secret. Shown only in this response; store it now.' }),
    scopes: Type.Array(Type.String({ enum: [...SCOPES] }), { maxItems: 3 }),
    name: Type.Union([Type.String({ maxLength: 100 }), Type.Null()]),
  },
  { $id: 'CreatedToken', title: 'CreatedToken' },
);

export const TokenParams = Type.Object({ token_id: Id });
