import { defineSettings, positiveInt } from '../shared/settings.js';

export interface WebhooksConfig {
  /** Attempts per delivery (the first one included) before it is `failed`. */
  maxAttempts: number;
  /** Time limit of one attempt, from connecting to the end of the answer. */
  timeoutMs: number;
  /** Deliveries in flight at once, over all webhooks (one per webhook at a time). */
  concurrency: number;
  /** Deliveries waiting per webhook; more are dropped (logged as `webhook.deliveries_dropped`). */
  maxPending: number;
  /** Finished deliveries are kept this many days for inspection. */
  retentionDays: number;
}

export const DEFAULT_WEBHOOKS_CONFIG: WebhooksConfig = {
  maxAttempts: 8,
  timeoutMs: 10_000,
  concurrency: 4,
  maxPending: 1000,
  retentionDays: 14,
};

/** The first retry waits about this long; each further one twice as long, up to the cap. */
export const RETRY_BASE_MS = 10_000;
export const RETRY_MAX_MS = 60 * 60_000;
/** Of a receiver's answer only the status matters; at most this much of its body is read. */
export const MAX_ANSWER_BYTES = 64 * 1024;

const W = DEFAULT_WEBHOOKS_CONFIG;

/** SITEWARDEN_WEBHOOK_*, read by src/config.ts. */
export const WEBHOOK_SETTINGS = defineSettings({
  SITEWARDEN_WEBHOOK_MAX_ATTEMPTS: {
    schema: positiveInt('SITEWARDEN_WEBHOOK_MAX_ATTEMPTS', W.maxAttempts, 20),
    default: String(W.maxAttempts),
    doc: 'attempts per webhook delivery (the first included) before it is `failed` and `webhook.delivery_failed` is logged; retries back off exponentially (about 10 s, 20 s, 40 s, … up to an hour)',
    comment:
      'Webhooks (POST /api/webhooks): attempts per delivery before it fails (exponential backoff with\njitter in between), the time limit of one attempt, deliveries in flight at once, deliveries\nwaiting per webhook before new events are dropped, and days finished deliveries are kept.',
  },
  SITEWARDEN_WEBHOOK_TIMEOUT_MS: {
    schema: positiveInt('SITEWARDEN_WEBHOOK_TIMEOUT_MS', W.timeoutMs, 120_000),
    default: String(W.timeoutMs),
    doc: 'time limit of one delivery attempt, connecting and the answer included',
  },
  SITEWARDEN_WEBHOOK_CONCURRENCY: {
    schema: positiveInt('SITEWARDEN_WEBHOOK_CONCURRENCY', W.concurrency, 64),
    default: String(W.concurrency),
    doc: 'webhook deliveries in flight at once, over all webhooks (one per webhook at a time)',
  },
  SITEWARDEN_WEBHOOK_MAX_PENDING: {
    schema: positiveInt('SITEWARDEN_WEBHOOK_MAX_PENDING', W.maxPending, 1_000_000),
    default: String(W.maxPending),
    doc: 'deliveries waiting per webhook; further events for it are dropped and `webhook.deliveries_dropped` is logged',
  },
  SITEWARDEN_WEBHOOK_RETENTION_DAYS: {
    schema: positiveInt('SITEWARDEN_WEBHOOK_RETENTION_DAYS', W.retentionDays, 3650),
    default: String(W.retentionDays),
    doc: 'how long finished deliveries (succeeded or failed) are kept for `GET /api/webhooks/{id}/deliveries`',
  },
});
