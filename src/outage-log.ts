/** What a background loop's outage log writes to (the app's logger, or a child of it). */
export interface OutageLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * A background loop's log through an outage (the database gone for a minute, say): one `warn` line when
 * its work starts failing, one `info` line when it works again, saying how many attempts failed in
 * between, and nothing at each failed attempt. The first error's message and code are logged, never its
 * stack: a loop that polls every 500 ms wrote an 11-line stack twice a second before (README, Guarantees).
 */
export function outageLog(log: OutageLogger, what: string) {
  let since: number | undefined;
  let failures = 0;
  return {
    failed(err: unknown): void {
      failures++;
      if (since !== undefined) return;
      since = Date.now();
      const code = (err as { code?: unknown } | null)?.code;
      log.warn(
        { error: err instanceof Error ? err.message : String(err), ...(typeof code === 'string' ? { code } : {}) },
        `${what} failed; retrying, logged again when it works`,
      );
    },
    succeeded(): void {
      if (since === undefined) return;
      log.info({ failures, seconds: Math.round((Date.now() - since) / 100) / 10 }, `${what} works again`);
      since = undefined;
      failures = 0;
    },
  };
}
