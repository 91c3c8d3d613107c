import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { eventJson, lastSequence, readEvents, type EventRow } from '../events/events.repository.js';
import { claimWebhook, dueWebhooks, recordAttempt, releaseLease, renewLease, skipTo, type WebhooksTable } from './webhooks.repository.js';
import { postJson } from './webhooks.send.js';
import { OneAtATime } from '../events/one-at-a-time.js';
import { SIGNATURE_HEADER, signature } from './webhooks.signature.js';

// Sends each webhook its events one at a time, in sequence order. A process sends for a webhook only
// while it holds the webhook's lease (webhooks.repository.ts: claimed with SKIP LOCKED on
// PostgreSQL, renewed before every send and longer than a send may take), so two instances never send
// to one webhook at once. A lease left by a process that died lapses and another (or the restarted
// one) takes over from the recorded cursor: what was not recorded as delivered is sent again.

const HOUR = 3600_000;
const MAX_ERROR = 500;

export class WebhookDeliverer {
  private readonly owner = randomUUID();
  private readonly leaseMs: number;
  private timer: NodeJS.Timeout | undefined;
  private readonly passes = new OneAtATime(() => this.pass());
  private closed = false;
  /** Some webhook was due at the last pass (or was just created here). */
  private active = false;

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly log: FastifyBaseLogger,
  ) {
    this.leaseMs = 2 * config.webhookTimeoutMs + 1000;
  }

  /** The first pass comes with the first poll, not at once: startup's own queries come first. */
  start(): void {
    this.timer = setInterval(() => this.wake(), this.config.eventsPollMs).unref();
  }

  /** After a write answered here: a pass now, when a webhook may want its events (else the poll looks). */
  wakeForWrite(): void {
    if (this.active) this.wake();
  }

  /** A webhook was created here: it is looked at with the next write, not the next poll. */
  activate(): void {
    this.active = true;
  }

  wake(): void {
    if (!this.closed) this.passes.wake();
  }

  /**
   * Stops taking work. A send under way is not waited for (the database may be what is stuck): if
   * its acknowledgement is not recorded before the connection closes, the event is sent again later.
   */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
  }

  private async pass(): Promise<void> {
    try {
      const due = await dueWebhooks(this.db, new Date().toISOString());
      // Writes answered here wake the sender only while some webhook could have work (see wake()).
      this.active = due.length > 0;
      if (!this.active) return;
      const last = await lastSequence(this.db);
      await Promise.all(due.filter((w) => w.cursor < last).map((w) => this.serve(w.id)));
    } catch (err) {
      if (!this.closed) this.log.warn({ err }, 'webhook deliveries failed; the next poll tries again');
    }
  }

  private leaseEnd = () => new Date(Date.now() + this.leaseMs).toISOString();

  private async serve(id: number): Promise<void> {
    const hook = await claimWebhook(this.db, id, this.owner, new Date().toISOString(), this.leaseEnd());
    if (!hook) return; // another process has it
    try {
      const types = hook.types.split(',');
      let cursor = Number(hook.cursor);
      let attempts = hook.attempts;
      while (!this.closed) {
        const last = await lastSequence(this.db);
        const [event] = await readEvents(this.db, cursor, 1, types);
        if (!event) {
          // Nothing of its types up to `last` (read before): no need to look at those again.
          if (last > cursor) await skipTo(this.db, id, this.owner, last);
          return;
        }
        if (!(await renewLease(this.db, id, this.owner, this.leaseEnd()))) return;
        const delivered = await this.send(hook, event, attempts + 1);
        if (!delivered) return;
        cursor = event.sequence;
        attempts = 0;
      }
    } finally {
      await releaseLease(this.db, id, this.owner);
    }
  }

  /** One attempt at one event, recorded; true when the receiver acknowledged it. */
  private async send(hook: WebhooksTable, event: EventRow, attempt: number): Promise<boolean> {
    const body = eventJson(event);
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      [SIGNATURE_HEADER]: signature(hook.secret, timestamp, body),
      'X-Catalogue-Event': event.type,
      'X-Catalogue-Sequence': String(event.sequence),
      'X-Catalogue-Event-Id': event.id,
    };
    const started = performance.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      statusCode = (await postJson(hook.url, body, headers, this.config.webhookTimeoutMs, this.config.webhookAllowPrivate)).status;
      if (statusCode < 200 || statusCode > 299) error = `The receiver answered ${statusCode}.`;
    } catch (err) {
      error = (err instanceof Error ? err.message : String(err)).slice(0, MAX_ERROR);
    }
    const record = {
      sequence: event.sequence,
      eventId: event.id,
      type: event.type,
      attempt,
      statusCode,
      error,
      durationMs: Math.round(performance.now() - started),
    };
    if (error === null) {
      await recordAttempt(this.db, hook.id, this.owner, record, { delivered: true });
      return true;
    }
    const delay = Math.min(this.config.webhookRetryBaseMs * 2 ** (attempt - 1), HOUR);
    const retryAt = attempt >= this.config.webhookMaxAttempts ? null : new Date(Date.now() + delay).toISOString();
    await recordAttempt(this.db, hook.id, this.owner, record, { delivered: false, retryAt });
    if (!retryAt) this.log.warn({ webhook: hook.id, sequence: event.sequence, error }, 'webhook marked failing');
    return false;
  }
}
