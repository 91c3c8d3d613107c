import { Type, type Static } from '@sinclair/typebox';
import { Id, NameString } from '../../schemas.js';
import { USER_STATUSES } from './users.collection.js';
import { ALIAS_PATTERN } from '../aliases/aliases.schemas.js';

export const User = Type.Object(
  {
    id: Id,
    first_name: Type.String({ maxLength: 100 }),
    last_name: Type.String({ maxLength: 100 }),
    email: Type.String({ maxLength: 254 }),
    age: Type.Integer({ minimum: 0, maximum: 150 }),
    status: Type.String({ enum: [...USER_STATUSES] }),
    country: Type.String({ maxLength: 64 }),
  },
  { $id: 'User', title: 'User' },
);
export type User = Static<typeof User>;

const userFields = {
  first_name: NameString(100, 'First name, not blank, 1..100 characters as sent; stored trimmed.'),
  last_name: NameString(100, 'Last name, not blank, 1..100 characters as sent; stored trimmed.'),
  email: Type.String({ format: 'email', maxLength: 254, description: 'A valid address, unique (case-insensitively).' }),
  age: Type.Integer({ minimum: 0, maximum: 150 }),
  status: Type.String({ enum: [...USER_STATUSES] }),
  country: NameString(64, 'Country name or code, not blank, 1..64 characters as sent; stored trimmed; matched case-insensitively by lives_in.'),
};

export const CreateUserBody = Type.Object(userFields, { additionalProperties: false });
export type CreateUserBody = Static<typeof CreateUserBody>;

export const PatchUserBody = Type.Partial(Type.Object(userFields), {
  additionalProperties: false,
  minProperties: 1,
  description: 'Any of the fields, with the same rules as on create; at least one.',
});
export type PatchUserBody = Static<typeof PatchUserBody>;

export const UserIdParams = Type.Object({ id: Id });
/** Where a user is addressed: /users/{id}. */
export type UserKey = Static<typeof UserIdParams>;

/**
 * GET /users/{id}: up to 64 characters; digits are a user id, checked as every id is (then `id`
 * arrives as a number), anything else must be an alias name (then it stays a string).
 */
export const UserOrAliasParams = Type.Object({
  id: Type.Unsafe<number | string>({
    type: 'string',
    maxLength: 64,
    description: 'A user id (integer), or an alias name such as `young-brazilians` (then the answer is a list).',
    examples: ['42', 'young-brazilians'],
    if: { pattern: '^(0|[1-9][0-9]*)$', maxLength: 64 },
    then: Id,
    else: {
      if: { maxLength: 64 },
      then: {
        pattern: ALIAS_PATTERN,
        'x-error-rule': 'invalid',
        'x-error-message': 'Must be a user id (integer) or an alias name (lower-case words joined by hyphens).',
      },
    },
  }),
});
