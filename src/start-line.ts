import type { AddressInfo } from 'node:net';
import type { Config } from './config.js';
import { redactedUrl } from './start-errors.js';

/** The one line a start prints on standard error once the service listens (tests and operators wait for it). */
export function listeningLine(address: AddressInfo | string | null, config: Pick<Config, 'databaseUrl' | 'workers'>): string {
  const where =
    typeof address === 'object' && address
      ? `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`
      : String(address);
  const workers = config.workers > 1 ? `${config.workers} workers, ` : '';
  return `music-catalogue listening on ${where} (${workers}database: ${redactedUrl(config.databaseUrl)}, docs: ${where}/docs)\n`;
}
