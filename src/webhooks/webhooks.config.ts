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
