// Recognising constraint violations from either driver, so routes can answer 404/409 instead of 500.

interface DriverError {
  code?: unknown;
}

/** A row refers to a parent that does not exist (SQLite SQLITE_CONSTRAINT_FOREIGNKEY, PostgreSQL 23503). */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as DriverError | null)?.code;
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === '23503';
}

/** A unique constraint was hit (SQLite SQLITE_CONSTRAINT_UNIQUE / PRIMARYKEY, PostgreSQL 23505). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as DriverError | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}
