import { Type, type TProperties } from '@sinclair/typebox';
import { INT_MAX, LIST_MAX_ITEMS, PAGE_DEFAULT_SIZE, PAGE_MAX_SIZE, VALUE_MAX_LENGTH, type CollectionDef, type FilterDef } from './collection.js';

// The OpenAPI description of a collection's query parameters. The engine reads the raw query string
// itself (lists, repeats and pagination styles need the text as sent), so the validator compiler lets
// a schema marked `x-raw-query` through and the engine reports every bad parameter instead. What the
// engine enforces is stated here too: in the schema where JSON Schema can say it (lengths, bounds,
// patterns), in the description where it cannot (rules between parameters).

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `sort`: comma-separated fields, each with an optional `:asc`/`:desc` (a bare field is asc); spaces around the parts are allowed. */
function sortPattern(fields: string[]): string {
  const key = `\\s*(${fields.map(escape).join('|')})\\s*(:\\s*(asc|desc)\\s*)?`;
  return `^${key}(,${key})*$`;
}

/** A string filter value: 1..200 characters; a list filter also takes `[a,b]` (each 1..200, at most 50). */
function stringFilter(description: string, list: boolean, values?: readonly string[], pattern?: FilterDef['pattern']) {
  if (values) return Type.String({ enum: [...values], description });
  const one = { minLength: 1, maxLength: VALUE_MAX_LENGTH, ...(pattern ? { pattern: pattern.regex, examples: [pattern.example] } : {}) };
  if (!list) return Type.String({ ...one, description });
  return Type.String({
    minLength: 1,
    // The URL limit (8 KiB) bounds a list; each value's own limit is in the description.
    maxLength: 8192,
    // A value starting with `[` is a list and must end with `]`.
    pattern: '^(?:[^\\[][\\s\\S]*|\\[[\\s\\S]*\\])$',
    description: `${description} A list \`[a,b]\` matches any of its values: at most ${LIST_MAX_ITEMS}, each 1..${VALUE_MAX_LENGTH} characters; a single value is 1..${VALUE_MAX_LENGTH} characters.`,
  });
}

const ONE_STYLE = 'One pagination style per request: page+size, offset+limit, page+pagesize or after+size (two at once is 400).';

/** `note` is added to every parameter's description (e.g. when only some values of a path take them). */
export function listQuerystring(def: CollectionDef, note?: string) {
  const props: TProperties = {};
  for (const [name, f] of Object.entries(def.filters)) {
    props[name] = Type.Optional(
      f.type === 'integer'
        ? Type.Integer({ minimum: -INT_MAX, maximum: INT_MAX, format: 'int32', description: f.description })
        : stringFilter(f.description, Boolean(f.list), f.values, f.pattern),
    );
  }
  const sortable = Object.keys(def.sortable);
  if (def.embeds) {
    props.embed = Type.Optional(
      Type.String({
        enum: Object.keys(def.embeds),
        description: Object.entries(def.embeds)
          .map(([name, text]) => `\`${name}\`: ${text}`)
          .join(' '),
      }),
    );
  }
  Object.assign(props, {
    sort: Type.Optional(
      Type.String({
        pattern: sortPattern(sortable),
        maxLength: 8192, // the URL limit
        description: `Multi-field sort: comma-separated \`field:asc|desc\` pairs, applied in order; a field without a direction is asc. Fields: ${sortable.join(', ')}, each at most once. Not with sort_by or order. Ties are broken by id ascending; strings sort a-to-z case-insensitively.`,
        examples: [`${sortable[1] ?? 'id'}:asc,id:desc`],
      }),
    ),
    sort_by: Type.Optional(Type.String({ enum: sortable, description: 'Single-field sort key, with `order`. Not with `sort`.' })),
    order: Type.Optional(
      Type.String({ enum: ['asc', 'desc'], description: 'Direction for sort_by (default asc: a to z). Only with sort_by: order alone is 400.' }),
    ),
    page: Type.Optional(
      Type.Integer({ minimum: 1, maximum: INT_MAX, format: 'int32', description: `Page number, 1-based (with size or pagesize). ${ONE_STYLE}` }),
    ),
    size: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: PAGE_MAX_SIZE,
        description: `Results per page (default ${PAGE_DEFAULT_SIZE}, max ${PAGE_MAX_SIZE}), with page or after. ${ONE_STYLE}`,
      }),
    ),
    after: Type.Optional(
      Type.String({
        maxLength: 4096,
        pattern: '^([A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+)?$',
        description: `Cursor pagination (after+size): the rows after the cursor, in the sort order. Empty (\`after=\`) starts at the first row; each page's \`Link\` rel="next" carries the cursor of the next one, and is absent on the last page (rel="first" is the only other link). Rows inserted or deleted before the cursor do not shift the pages after it; X-Total-Count is the exact total. A cursor belongs to its list and sort: another, or an edited one, is 400. ${ONE_STYLE}`,
        examples: [''],
      }),
    ),
    pagesize: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_MAX_SIZE, description: `Alternative name for size (page+pagesize style). ${ONE_STYLE}` })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: INT_MAX, format: 'int32', description: `Rows to skip (offset+limit style). ${ONE_STYLE}` })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_MAX_SIZE, description: `Rows to return (offset+limit style). ${ONE_STYLE}` })),
  });
  if (note) {
    for (const [name, schema] of Object.entries(props)) props[name] = { ...schema, description: `${String(schema.description ?? '')} ${note}`.trim() };
  }
  return Type.Object(props, {
    'x-raw-query': true,
    description: 'Unknown parameters, repeated parameters and two pagination styles at once are 400.',
  });
}

/** Response headers of every list, for the OpenAPI document. */
export const LIST_HEADERS = {
  'X-Total-Count': { type: 'integer', minimum: 0, maximum: INT_MAX, description: 'How many items the filters select, across all pages.' },
  Link: {
    type: 'string',
    // Four links, each the request's path and kept parameters (a URL is at most 8 KiB).
    maxLength: 40_000,
    description: 'RFC 8288 links first, prev, next, last (prev/next only when they exist), with the same filters and sort.',
  },
} as const;
