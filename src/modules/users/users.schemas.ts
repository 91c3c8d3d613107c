import { Type, type Static } from '@sinclair/typebox';
import { Id, NameString } from '../../schemas.js';
import { USER_STATUSES } from './users.collection.js';

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

export const ALIAS_PATTERN = '^[a-z][a-z0-9]*(-[a-z0-9]+)*$';

/** GET /users/{id}: an integer id, or an alias name (lower-case words joined by hyphens). */
export const UserOrAliasParams = Type.Object({
  id: Type.String({
    maxLength: 64,
    description: 'A user id (integer), or an alias name such as `young-brazilians` (then the answer is a list).',
    examples: ['42', 'young-brazilians'],
  }),
});
