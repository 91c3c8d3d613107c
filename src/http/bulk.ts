import { Type, type TSchema } from '@sinclair/typebox';

// Bulk create: a creating POST takes one item, as always, or an array of up to BULK_MAX of them,
// stored all-or-nothing (one INSERT statement: every row or none) and answered with the created
// resources, with their ids, in the order sent. The schemas are marked `x-bulk`: the validator and
// the serializer (src/validation.ts) compile the one-item and the array form apart and pick by the
// value, so a single item is checked and answered exactly as before, with the same messages.

export const BULK_MAX = 100;

/** The body of a creating POST: the item, or an array of 1..BULK_MAX items. */
export function bulkBody<T extends TSchema>(single: T) {
  return Type.Union([single, Type.Array(single, { minItems: 1, maxItems: BULK_MAX })], {
    'x-bulk': true,
    description: `One item, or an array of 1..${BULK_MAX} items created together: all of them or none (the first failure is the answer).`,
  });
}

/** The 201 answer: the created item, or for an array body the created items in the order sent. */
export function bulkCreated<T extends TSchema>(single: T, description: string) {
  return Type.Union([single, Type.Array(single, { maxItems: BULK_MAX })], {
    'x-bulk': true,
    description: `${description} For an array body: the created items in the order sent, with their ids (no Location).`,
  });
}

/** Rows returned by one multi-row INSERT, in the order they were inserted (ids ascending). */
export const inInsertOrder = <R extends { id: number }>(rows: R[]): R[] => [...rows].sort((a, b) => a.id - b.id);
