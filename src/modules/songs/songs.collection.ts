import type { CollectionDef, FilterDef } from '../../query/index.js';
import { NAME_EQUALS, NAME_STARTS_WITH, nameMatches } from '../../query/collection.js';

// mm:ss with two-digit minutes, as songs store it: text order is duration order, so a range on the
// text is a range on the duration.
const DURATION = { regex: '^[0-9]{2}:[0-5][0-9]$', message: 'Must be mm:ss: two digits, a colon, two digits (seconds 00-59).', example: '03:30' };
const duration = (op: 'gt' | 'lt', description: string): FilterDef => ({ column: 'time', op, type: 'string', pattern: DURATION, description });

/** What the `songs` of GET .../albums/{album_id}/songs may be filtered and sorted by. */
export const songsCollection: CollectionDef = {
  name: 'songs',
  filters: {
    name: NAME_EQUALS,
    name_starts_with: NAME_STARTS_WITH,
    q: nameMatches(3),
    longer_than: duration('gt', 'Duration (time) longer than the value, mm:ss.'),
    shorter_than: duration('lt', 'Duration (time) shorter than the value, mm:ss.'),
  },
  sortable: {
    id: { column: 'id', type: 'integer' },
    // As people read it (its collation key: src/db/collation.ts).
    name: { column: 'name', type: 'string', key: true },
    // mm:ss with two-digit minutes: text order is duration order.
    time: { column: 'time', type: 'string' },
  },
};
