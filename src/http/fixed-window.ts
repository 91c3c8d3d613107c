/**
 * Counts events per key in fixed windows, holding at most maxKeys keys, so a flood of distinct
 * keys (spoofed tokens, many addresses) costs bounded memory: expired windows are dropped first,
 * then the oldest.
 */
export class FixedWindowCounter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly maxKeys = 10_000,
  ) {}

  /** Seconds until the key may try again; 0 while it is under the limit. */
  blockedFor(key: string, now = Date.now()): number {
    const w = this.windows.get(key);
    if (!w || w.resetAt <= now || w.count < this.limit) return 0;
    return Math.max(1, Math.ceil((w.resetAt - now) / 1000));
  }

  hit(key: string, now = Date.now()): void {
    this.take(key, now);
  }

  /** Counts one event; its count in the current window and the milliseconds left of that window. */
  take(key: string, now = Date.now()): { current: number; ttl: number } {
    let w = this.windows.get(key);
    if (w && w.resetAt > now) {
      w.count += 1;
    } else {
      if (w) this.windows.delete(key);
      if (this.windows.size >= this.maxKeys) this.evict(now);
      this.windows.set(key, (w = { count: 1, resetAt: now + this.windowMs }));
    }
    return { current: w.count, ttl: w.resetAt - now };
  }

  private evict(now: number): void {
    for (const [key, w] of this.windows) if (w.resetAt <= now) this.windows.delete(key);
    while (this.windows.size >= this.maxKeys) {
      const oldest = this.windows.keys().next().value;
      if (oldest === undefined) break;
      this.windows.delete(oldest);
    }
  }
}
