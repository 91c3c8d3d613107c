// The tables whose every write moves their row of `table_versions` (triggers made by migration
// 20261124T0100, which keeps its own frozen copy of this list): what a cached answer, a remembered
// total or a page boundary may be kept under (db/table-stamps.ts, db/reads.ts). A table added here
// needs a migration giving it its version row and triggers first.
export const VERSIONED_TABLES = ['artists', 'albums', 'songs', 'users', 'aliases', 'tokens'] as const;

export type VersionedTable = (typeof VERSIONED_TABLES)[number];
