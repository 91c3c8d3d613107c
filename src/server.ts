import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { buildApp } from './app.js';
import { bootstrapAdminToken } from './modules/tokens/tokens.repository.js';
import { printAdminToken } from './modules/tokens/admin-token.js';
import { databaseStartMessage, explained, listenStartMessage } from './start-errors.js';
import { listeningLine } from './start-line.js';

/**
 * loadConfig -> buildApp -> listen, with a graceful close on SIGTERM/SIGINT. In a cluster worker
 * (`worker: true`, `bootstrap: false`) the primary has created the admin token already and prints the
 * one "listening on" line (cluster.ts).
 */
export async function startServer(config: Config, options: { bootstrap?: boolean; worker?: boolean } = {}): Promise<FastifyInstance> {
  const app = await explained(
    () => buildApp(config),
    (err) => databaseStartMessage(err, config.databaseUrl, config.pgConnectTimeoutMs),
  );
  try {
    await explained(
      () => app.listen({ port: config.port, host: config.host }),
      (err) => listenStartMessage(err, config),
    );
  } catch (err) {
    await app.close().catch(() => {});
    throw err;
  }
  // The admin token is created only once the service listens: a start that fails before (a wrong
  // HOST, a port in use) leaves no token nobody saw, and prints none.
  if (options.bootstrap !== false) printAdminToken(await bootstrapAdminToken(app.db, config.adminToken));
  // In a cluster the primary says it once for all its workers (cluster.ts).
  if (!options.worker) process.stderr.write(listeningLine(app.server.address(), config));

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const timer = setTimeout(() => {
      app.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    timer.unref();
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  return app;
}
