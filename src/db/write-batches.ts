// How many writes share a commit: counted where batches are committed (db/group-commit.ts on
// SQLite, db/pg-batch.ts on PostgreSQL) and read by the metrics at scrape time. Per process.

export const writeBatches = { batches: 0, writes: 0 };

/** One commit that carried `writes` acknowledged writes. */
export function countBatch(writes: number): void {
  writeBatches.batches++;
  writeBatches.writes += writes;
}
