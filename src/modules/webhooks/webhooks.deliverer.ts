import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { eventJson, lastSequence, readEvents, readPublished, type EventRow } from '../events/events.repository.js';
import {
  claimWebhook,
  dueWebhooks,
  heldRevision,
  leasedWebhook,
  recordAttempt,
  releaseLease,
  renewLease,
  skipTo,
  type WebhooksTable,
} from './webhooks.repository.js';
import { postJson } from './webhooks.send.js';
import { OneAtATime } from '../events/one-at-a-time.js';
import { deliveryHeaders } from './webhooks.signature.js';
import { outageLog } from '../../outage-log.js';

// Sends each webhook its events in sequence order, one POST at a time, up to its batch size per POST.
// A process sends for a webhook only while it holds the webhook's lease (webhooks.repository.ts:
// claimed with SKIP LOCKED on PostgreSQL, extended with every recorded attempt and always longer
// than a send may take), so two instances never send to one webhook at once. A lease left by a
// process that died lapses and another (or the restarted one) takes over from the recorded cursor:
// what was not recorded as delivered is sent again.
//
// Each webhook has a sender of its own: a pass only starts senders for the webhooks that have work
// and does not wait for them, so a receiver that answers slowly, or never, holds up its own webhook
// and no other (issue 34: a hanging receiver used to stall every webhook's pass for its timeout).
// Under load a POST carries whatever has come since the previous one (up to the batch size), so the
// number of POSTs and commits per event falls as the rate rises.

const HOUR = 3600_000;
const MAX_ERROR = 500;

export class WebhookDeliverer {
  private readonly owner = randomUUID();
  private readonly leaseMs: number;
  private timer: NodeJS.Timeout | undefined;
  private readonly passes = new OneAtATime(() => this.pass());
  private closed = false;
  /**
   * Some webhook may get work from a write answered here: the last pass found one due with nothing
   * to send, or one was created or PATCHed here, or a sender here let go of one since that pass.
   */
  private idle = false;
  /** Senders that have let go of their webhook so far (a pass tells whether one did while it ran). */
  private released = 0;
  /** The webhooks this process is sending for now; `again`: woken since the sender last found nothing to send. */
  private readonly senders = new Map<number, { again: boolean }>();

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly log: FastifyBaseLogger,
  ) {
    this.leaseMs = 2 * config.webhookTimeoutMs + 1000;
    this.outage = outageLog(log, 'webhook deliveries');
  }

  /**
   * The database failing the passes and the senders: one line when it starts, one when it ends, and
   * nothing at each poll in between (the passes poll every EVENTS_POLL_MS, with or without webhooks).
   */
  private readonly outage: ReturnType<typeof outageLog>;

  /** The first pass comes with the first poll, not at once: startup's own queries come first. */
  start(): void {
    this.timer = setInterval(() => this.wake(), this.config.eventsPollMs).unref();
  }

  /**
   * After a write answered here: the senders running here look once more before they stop, and a pass
   * runs only when an idle webhook may want the new events (else the poll looks). Under sustained
   * writes a webhook's sender runs the whole time, so writes cost no pass, no query, at all.
   */
  wakeForWrite(): void {
    if (this.closed) return;
    for (const sender of this.senders.values()) sender.again = true;
    if (this.idle) this.passes.wake();
  }

  /** A webhook was created or changed here: it is looked at with the next write, not the next poll. */
  activate(): void {
    this.idle = true;
  }

  wake(): void {
    if (this.closed) return;
    for (const sender of this.senders.values()) sender.again = true;
    this.passes.wake();
  }

  /**
   * Stops taking work. A send under way is not waited for (the database may be what is stuck): if
   * its acknowledgement is not recorded before the connection closes, the events are sent again later.
   */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
  }

  private async pass(): Promise<void> {
    const released = this.released;
    try {
      // Due: active, not waiting for a retry, and not leased (a webhook sent for here or elsewhere is not).
      const due = await dueWebhooks(this.db, new Date().toISOString());
      this.outage.succeeded();
      let idle = false;
      if (due.length > 0) {
        const last = await lastSequence(this.db);
        for (const w of due) {
          if (this.senders.has(w.id) || this.closed) continue;
          if (w.cursor < last) this.startSender(w.id);
          else idle = true;
        }
      }
      this.idle = idle || this.released !== released;
    } catch (err) {
      if (!this.closed) this.outage.failed(err);
    }
  }

  /** Runs a sender for one webhook, not waited for: the pass goes on to the next webhook at once. */
  private startSender(id: number): void {
    const state = { again: false };
    this.senders.set(id, state);
    void this.serve(id, state)
      .catch((err: unknown) => {
        if (!this.closed) this.outage.failed(err);
      })
      .finally(() => {
        this.senders.delete(id);
        this.released += 1;
        this.idle = true;
        // Woken while it was letting go of the lease: the pass that woke it skipped this webhook.
        if (state.again) this.wake();
      });
  }

  private leaseEnd = () => Date.now() + this.leaseMs;

  private async serve(id: number, state: { again: boolean }): Promise<void> {
    let leaseEnds = this.leaseEnd();
    let hook = await claimWebhook(this.db, id, this.owner, new Date().toISOString(), new Date(leaseEnds).toISOString());
    if (!hook) return; // another process has it
    try {
      let cursor = Number(hook.cursor);
      let attempts = hook.attempts;
      /** PATCHed (resumed, rewound): go on from the webhook as it is now; false when there is nothing to go on with. */
      const reread = async () => {
        hook = await leasedWebhook(this.db, id, this.owner);
        if (!hook || hook.status !== 'active') return false;
        cursor = Number(hook.cursor);
        attempts = hook.attempts;
        return true;
      };
      while (!this.closed) {
        const types = hook.types.split(',');
        state.again = false;
        const events = await readEvents(this.db, cursor, hook.batch_size, types);
        if (events.length === 0) {
          if (state.again) continue; // a write came while reading: look once more
          // Nothing of its types after the cursor. `last` read first, then looked at again: every event
          // up to `last` has committed (docs/events.md), so if none of them is of its types the cursor
          // may pass them all and they are never read again.
          const last = await lastSequence(this.db);
          if ((await readPublished(this.db, cursor, 1, types)).length > 0) continue; // one came meanwhile
          if (last > cursor) {
            await skipTo(this.db, id, this.owner, hook.revision, last);
            cursor = last;
          }
          if (state.again) continue;
          return;
        }
        // Still ours, as read? A deleted webhook gets nothing more; a PATCHed one is read again. (A
        // read, not a write: the lease is extended by the commit that records each POST, and renewed
        // here only when what is left of it would not outlast a send.)
        const revision = await heldRevision(this.db, id, this.owner);
        if (revision === undefined) return;
        if (revision !== hook.revision) {
          if (await reread()) continue;
          return;
        }
        if (leaseEnds - Date.now() < this.config.webhookTimeoutMs + 1000) {
          leaseEnds = this.leaseEnd();
          if (!(await renewLease(this.db, id, this.owner, new Date(leaseEnds).toISOString()))) return;
        }
        const extended = this.leaseEnd();
        const sent = await this.send(hook, events, attempts + 1, new Date(extended).toISOString());
        if (sent.state === 'lost') return;
        leaseEnds = extended;
        if (sent.state === 'revised') {
          if (await reread()) continue;
          return;
        }
        if (sent.state !== 'recorded' || !sent.delivered) return; // the retry is scheduled; the lease goes
        cursor = events.at(-1)!.sequence;
        attempts = 0;
        hook.batch_size = sent.batchSize;
      }
    } finally {
      await releaseLease(this.db, id, this.owner);
    }
  }

  /** One POST of `events`, recorded with its effect. */
  private async send(
    hook: WebhooksTable,
    events: EventRow[],
    attempt: number,
    leaseUntil: string,
  ): Promise<{ state: 'recorded'; delivered: boolean; batchSize: number } | { state: 'revised' | 'lost' }> {
    const first = events[0]!;
    const last = events.at(-1)!;
    const batched = hook.batch_size > 1;
    const body = batched ? `{"events":[${events.map(eventJson).join(',')}]}` : eventJson(first);
    const headers = deliveryHeaders(hook.secret, Math.floor(Date.now() / 1000), body, events, batched);
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
      sequence: first.sequence,
      lastSequence: last.sequence,
      events: events.length,
      eventId: first.id,
      type: first.type,
      attempt,
      statusCode,
      error,
      durationMs: Math.round(performance.now() - started),
    };
    if (error === null) {
      const recorded = await recordAttempt(this.db, hook.id, this.owner, hook.revision, leaseUntil, record, { delivered: true });
      return recorded.state === 'recorded' ? { ...recorded, delivered: true } : recorded;
    }
    const delay = Math.min(this.config.webhookRetryBaseMs * 2 ** (attempt - 1), HOUR);
    const retryAt = attempt >= this.config.webhookMaxAttempts ? null : new Date(Date.now() + delay).toISOString();
    const recorded = await recordAttempt(this.db, hook.id, this.owner, hook.revision, leaseUntil, record, { delivered: false, retryAt });
    if (recorded.state !== 'recorded') return recorded;
    if (!retryAt) this.log.warn({ webhook: hook.id, sequence: first.sequence, error }, 'webhook marked failing');
    return { ...recorded, delivered: false };
  }
}
