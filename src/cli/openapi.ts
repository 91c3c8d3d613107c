import { writeFileSync } from 'node:fs';
import { makeConfig } from '../config.js';
import { parseOptions, write, type Command } from './command.js';

/** The OpenAPI document exactly as the service serves it at /openapi.json. */
export async function openapiDocument(): Promise<unknown> {
  // The document depends only on the routes, so an in-memory database is enough to build the app. The
  // app is loaded here, as it is by serve: the other commands never load it (scripts/bundle.mjs).
  const { buildApp } = await import('../app.js');
  const app = await buildApp(makeConfig({ databaseUrl: 'sqlite::memory:', logLevel: 'silent' }), { logger: false });
  try {
    await app.ready();
    return app.swagger();
  } finally {
    await app.close();
  }
}

export const openapi: Command = {
  summary: 'Print the OpenAPI 3.1 document (as served at /openapi.json).',
  usage: `music-catalogue openapi [--file PATH]

Print the OpenAPI 3.1 document of this version of the service as JSON.

Options:
  --file PATH   write it to PATH instead of standard output`,
  async run(args, ctx) {
    const { values } = parseOptions(args, { file: { type: 'string' } });
    const text = `${JSON.stringify(await openapiDocument(), null, 2)}\n`;
    if (values.file) writeFileSync(values.file, text);
    else write(ctx.stdout, text);
    return 0;
  },
};
