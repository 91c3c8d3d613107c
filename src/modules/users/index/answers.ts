import { comparisonOf, summaryAnswers, type HeldColumn } from '../../../query/comparison.js';
import { sortKeys, type ListPlan, type OrderKey } from '../../../query/sql.js';
import type { PageStyle } from '../../../query/page.js';
import type { SortField } from './users-index.js';

// What the users index answers, declared as a summary declares it (query/summary.ts): the stored
// columns it holds with the operators it takes on each, the sort keys it orders by, and the page
// styles. A list with anything else (an exact name, a country prefix, q, three sort keys) is
// answered by SQL, as without the index. The test of a filter is its comparison (query/comparison.ts),
// the same object its SQL is made from, so "the index holds country_fold with eq" cannot mean
// anything but what `lives_in` compares.

export interface IndexAnswers {
  /** Per stored column, the operators answered. */
  filters: ReadonlyMap<string, HeldColumn>;
  /** Per stored sort column (sql.ts sortColumnOf), the field whose permutations order it. */
  sorts: ReadonlyMap<string, SortField>;
  /** At most this many sort keys besides a trailing id ascending (the tie-break the SQL adds). */
  maxSortKeys: number;
  styles: readonly PageStyle[];
}

export function declareIndexAnswers(declaration: {
  filters: Readonly<Record<string, HeldColumn>>;
  sorts: Readonly<Record<string, SortField>>;
  maxSortKeys: number;
  styles: readonly PageStyle[];
}): IndexAnswers {
  return { ...declaration, filters: new Map(Object.entries(declaration.filters)), sorts: new Map(Object.entries(declaration.sorts)) };
}

/** The family of issue 37: status, older/younger, lives_in (one or a list), a first or last name prefix; one or two sort keys then id; page, offset, pagesize and cursor paging. */
export const USERS_INDEX_ANSWERS = declareIndexAnswers({
  filters: {
    status: { ops: ['eq'] },
    age: { ops: ['gt', 'lt'] },
    country_fold: { ops: ['eq'] },
    // A name prefix (first_name_starts_with, last_name_starts_with): a mask over the name codes (query.ts selectionOf).
    first_name_key: { ops: ['prefix'] },
    last_name_key: { ops: ['prefix'] },
  },
  sorts: { id: 'id', first_name_key: 'first_name', last_name_key: 'last_name', age: 'age', status: 'status', country_key: 'country' },
  maxSortKeys: 2,
  styles: ['size', 'limit', 'pagesize', 'cursor'],
});

/** The sort keys as the index walks them: the SQL's keys (sql.ts orderKeys) without a trailing id ascending. */
export interface IndexSort {
  field: SortField;
  desc: boolean;
}

/** The sort the index would walk for this plan, or undefined when the declaration does not answer the plan. */
export function indexSortOf(answers: IndexAnswers, plan: ListPlan): IndexSort[] | undefined {
  if (!answers.styles.includes(plan.request.page.style)) return undefined;
  for (const c of plan.filters) {
    const comparison = comparisonOf(c);
    if (!summaryAnswers(answers.filters.get(comparison.column), comparison, (column) => answers.filters.has(column))) return undefined;
  }
  const keys: OrderKey[] = sortKeys(plan.request.sort);
  // The id tie-break is in every permutation already; an id key ends the order (ids are unique).
  const until = keys.findIndex((k) => k.column === 'id');
  const walked = until >= 0 ? keys.slice(0, until + 1) : keys;
  const last = walked[walked.length - 1];
  const meaningful = last && last.column === 'id' && last.direction === 'asc' && walked.length > 1 ? walked.slice(0, -1) : walked;
  if (meaningful.length > answers.maxSortKeys) return undefined;
  const out: IndexSort[] = [];
  for (const k of meaningful) {
    const field = answers.sorts.get(k.column);
    if (field === undefined) return undefined;
    out.push({ field, desc: k.direction === 'desc' });
  }
  return out;
}
