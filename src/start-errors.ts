import type { Config } from './config.js';

// A start that fails says in one line which setting to look at, and what was found wrong with it,
// instead of a driver's message (`connect ECONNREFUSED`, `getaddrinfo ENOTFOUND`) that names neither.
// Only failures recognised here are reworded; anything else keeps its own message.

/** A failed start, already worded for the operator (printed as it is by the CLI). */
export class StartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartError';
  }
}

type DriverError = Error & { code?: string; syscall?: string; hostname?: string; address?: string; port?: number };

const NETWORK: Record<string, string> = {
  ECONNREFUSED: 'connection refused: is the server running, and listening on that host and port?',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved (DNS did not answer)',
  EHOSTUNREACH: 'the host cannot be reached',
  ENETUNREACH: 'the network cannot be reached',
  ETIMEDOUT: 'the connection timed out',
  ECONNRESET: 'the server closed the connection',
};

/** The URL without its password, for messages. */
export function redactedUrl(url: string): string {
  return url.replace(/\/\/([^@/:]*):[^@/]*@/, '//$1:***@');
}

interface PostgresTarget {
  host: string;
  port: string;
  where: string;
  database: string;
  user: string;
  searchPath: string | undefined;
  sslmode: string | undefined;
}

function postgresTarget(url: string): PostgresTarget {
  try {
    const u = new URL(url);
    const options = u.searchParams.get('options') ?? '';
    return {
      host: u.hostname || 'localhost',
      port: u.port || '5432',
      where: `${u.hostname || 'localhost'}:${u.port || 5432}`,
      database: decodeURIComponent(u.pathname.slice(1)) || decodeURIComponent(u.username) || 'postgres',
      user: decodeURIComponent(u.username) || 'postgres',
      searchPath: /search_path\s*=\s*(\S+)/.exec(options)?.[1],
      sslmode: u.searchParams.get('sslmode') ?? undefined,
    };
  } catch {
    return { host: '', port: '', where: 'the server', database: '', user: '', searchPath: undefined, sslmode: undefined };
  }
}

/** Why the database named by DATABASE_URL could not be opened or prepared, naming DATABASE_URL; undefined when not recognised. */
export function databaseStartMessage(err: unknown, databaseUrl: string, connectTimeoutMs?: number): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as DriverError;
  const setting = `DATABASE_URL=${redactedUrl(databaseUrl)}`;
  if (databaseUrl.startsWith('sqlite:')) {
    if (e.code?.startsWith('SQLITE_CANTOPEN')) return `${setting}: cannot open the SQLite file (${e.code}): check the path and its permissions`;
    if (e.code === 'SQLITE_NOTADB') return `${setting}: the file is not a SQLite database (${e.code})`;
    if (e.code === 'SQLITE_READONLY' || e.code === 'EACCES') return `${setting}: the file or its directory is not writable (${e.code})`;
    return undefined;
  }
  const pg = postgresTarget(databaseUrl);
  // Another service's failure (Redis, say) is not the database's: the address must be the database's.
  const elsewhere = (e.port !== undefined && String(e.port) !== pg.port) || (e.hostname !== undefined && e.hostname !== pg.host);
  if (e.code && NETWORK[e.code] && !elsewhere) return `${setting}: cannot connect to PostgreSQL at ${pg.where}: ${NETWORK[e.code]} (${e.code})`;
  if (/timeout expired|connection timeout/i.test(e.message)) {
    return `${setting}: PostgreSQL at ${pg.where} did not accept a connection within PG_CONNECT_TIMEOUT_MS (${connectTimeoutMs ?? '?'} ms)`;
  }
  if (e.code === '3D000')
    return `${setting}: the database "${pg.database}" does not exist on ${pg.where}: create it (createdb ${pg.database}) or correct the URL`;
  if (e.code === '28P01' || e.code === '28000') return `${setting}: PostgreSQL at ${pg.where} refused user "${pg.user}": ${e.message} (${e.code})`;
  if (/does not support SSL/i.test(e.message)) {
    return `${setting}: sslmode=${pg.sslmode ?? 'require'} asks for TLS, but the server at ${pg.where} does not support SSL/TLS connections: enable TLS on the server, or use another sslmode`;
  }
  if (/self[- ]signed|certificate|unable to verify|hostname\/IP does not match|ERR_TLS/i.test(`${e.message} ${e.code ?? ''}`)) {
    return `${setting}: the TLS certificate of ${pg.where} was not accepted (sslmode=${pg.sslmode ?? 'require'}): ${e.message}`;
  }
  // db/migrate.ts refuses a connection whose search_path names no existing schema.
  if (/no current schema/i.test(e.message)) {
    const schema = pg.searchPath ? `the schema ${pg.searchPath} named by search_path does not exist` : 'search_path names no schema that exists';
    return `${setting}: ${schema} in database "${pg.database}": create it (CREATE SCHEMA ...) or correct options=-c search_path=...`;
  }
  if (e.code === '42501') return `${setting}: user "${pg.user}" may not create the service's tables here: ${e.message} (${e.code})`;
  return undefined;
}

/** Why the service could not listen, naming HOST or PORT; undefined when not recognised. */
export function listenStartMessage(err: unknown, config: Pick<Config, 'host' | 'port'>): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as DriverError;
  const at = `${config.host}:${config.port}`;
  switch (e.code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return `HOST=${config.host}: not an address nor a name that resolves, so there is nothing to listen on (${e.code})`;
    case 'EADDRNOTAVAIL':
      return `HOST=${config.host}: not an address of this machine, so the service cannot listen on it (${e.code})`;
    case 'EADDRINUSE':
      return `PORT=${config.port}: another process already listens on ${at} (${e.code})`;
    case 'EACCES':
      return `PORT=${config.port}: not allowed to listen on ${at} (ports below 1024 need privileges) (${e.code})`;
    default:
      return undefined;
  }
}

/** Runs one step of a start, rewording a failure `explain` recognises as a StartError. */
export async function explained<T>(step: () => Promise<T> | T, explain: (err: unknown) => string | undefined): Promise<T> {
  try {
    return await step();
  } catch (err) {
    const message = explain(err);
    throw message ? new StartError(message) : err;
  }
}
