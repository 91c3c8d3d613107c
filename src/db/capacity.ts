import type { Connection, ConnectionLog } from './connect.js';

/**
 * At start (PostgreSQL): warn when the server's connection slots cannot hold what this instance's
 * pool may open next to the connections other clients hold now. The service still runs (a request
 * that finds no slot waits for one, up to the pool's wait budget), but under load requests will queue
 * or fail with 503: raise max_connections, lower PG_POOL_SIZE, or put PgBouncer in front
 * (docs/scaling.md).
 */
export async function warnAboutConnectionCapacity(connection: Connection, log: ConnectionLog): Promise<void> {
  if (!connection.connectionCapacity) return;
  let capacity;
  try {
    capacity = await connection.connectionCapacity();
  } catch (err) {
    // A check, not a condition of starting: a server that hides these settings still serves.
    log.info({ error: (err as Error).message }, 'could not read the PostgreSQL connection limit');
    return;
  }
  const { available, others, poolSize } = capacity;
  if (available - others >= poolSize) return;
  log.warn(
    { max_connections_available: available, held_by_others: others, pg_pool_size: poolSize },
    `PostgreSQL has ${available} connection slots (max_connections less those reserved for superusers), ${others} held by other clients: ` +
      `fewer than the ${poolSize} this instance's pool (PG_POOL_SIZE) may open; requests will wait for connections under load (see docs/scaling.md)`,
  );
}
