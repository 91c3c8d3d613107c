import { Type, type TProperties } from '@sinclair/typebox';
import { PAGE_DEFAULT_SIZE, PAGE_MAX_SIZE, type CollectionDef } from './collection.js';

// The OpenAPI description of a collection's query parameters. The engine reads the raw query string
// itself (lists, repeats and pagination styles need the text as sent), so the validator compiler lets
// a schema marked `x-raw-query` through and the engine reports every bad parameter instead.

export function listQuerystring(def: CollectionDef) {
  const props: TProperties = {};
  for (const [name, f] of Object.entries(def.filters)) {
    const description = f.list ? `${f.description} A list \`[a,b]\` matches any of its values.` : f.description;
    props[name] =
      f.type === 'integer'
        ? Type.Optional(Type.Integer({ description }))
        : Type.Optional(Type.String(f.values ? { enum: [...f.values], description } : { description }));
  }
  const sortable = Object.keys(def.sortable);
  Object.assign(props, {
    sort: Type.Optional(
      Type.String({
        description: `Multi-field sort: comma-separated \`field:asc|desc\` pairs, applied in order. Fields: ${sortable.join(', ')}. Ties are broken by id ascending; strings sort a-to-z case-insensitively.`,
        examples: [`${sortable[1] ?? 'id'}:asc,id:desc`],
      }),
    ),
    sort_by: Type.Optional(Type.String({ enum: sortable, description: 'Single-field sort key, with `order`. Not with `sort`.' })),
    order: Type.Optional(Type.String({ enum: ['asc', 'desc'], description: 'Direction for sort_by (default asc: a to z).' })),
    page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page number, 1-based (with size or pagesize).' })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_MAX_SIZE, description: `Results per page (default ${PAGE_DEFAULT_SIZE}, max ${PAGE_MAX_SIZE}).` })),
    pagesize: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_MAX_SIZE, description: 'Alternative name for size (page+pagesize style).' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Rows to skip (offset+limit style).' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_MAX_SIZE, description: 'Rows to return (offset+limit style).' })),
  });
  return Type.Object(props, {
    'x-raw-query': true,
    description: 'Unknown parameters, repeated parameters and two pagination styles at once are 400.',
  });
}

/** Response headers of every list, for the OpenAPI document. */
export const LIST_HEADERS = {
  'X-Total-Count': { type: 'integer', description: 'How many items the filters select, across all pages.' },
  Link: {
    type: 'string',
    description: 'RFC 8288 links first, prev, next, last (prev/next only when they exist), with the same filters and sort.',
  },
} as const;
