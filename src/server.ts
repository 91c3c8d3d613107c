import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { buildApp } from './app.js';
import { bootstrapAdminToken } from './modules/tokens/tokens.repository.js';
import { printAdminToken } from './modules/tokens/admin-token.js';

/**
 * loadConfig -> buildApp -> listen, with a graceful close on SIGTERM/SIGINT. `bootstrap: false` in a
 * cluster worker: the primary has created the admin token already (cluster.ts).
 */
export async function startServer(config: Config, options: { bootstrap?: boolean } = {}): Promise<FastifyInstance> {
  const app = await buildApp(config);
  if (options.bootstrap !== false) printAdminToken(await bootstrapAdminToken(app.db, config.adminToken));

  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const where =
    typeof address === 'object' && address
      ? `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`
      : String(address);
  process.stderr.write(`music-catalogue listening on ${where} (database: ${config.databaseUrl.replace(/\/\/[^@/]*@/, '//***@')}, docs: ${where}/docs)\n`);

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
