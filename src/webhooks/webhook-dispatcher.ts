import { randomInt } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import type { Events, PublishedEvent } from '../shared/event-bus.js';
import { createId } from '../shared/ids.js';
import type { SecretBox } from '../shared/secret-box.js';
import { signature, webhookBody, type WebhookEvent } from './webhook-payload.js';
import type { SendOutcome, WebhookSender } from './webhook-sender.js';
import { RETRY_BASE_MS, RETRY_MAX_MS, type WebhooksConfig } from './webhooks.config.js';
import type { Enqueued, WebhooksRepository } from './webhooks.repository.js';
import type { DeliveryRow, WebhookRow } from './webhooks.table.js';

/** Events about webhooks themselves are never delivered by webhooks: a failing receiver must not feed itself. */
export const isWebhookEvent = (name: string) => name.startsWith('webhook.');

/** Equal jitter: half the exponential delay for sure, the other half at random. */
export function retryDelayMs(
  attemptsMade: number,
  random: (max: number) => number = (max) => randomInt(max + 1),
): number {
  const full = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, attemptsMade - 1));
  return Math.ceil(full / 2) + random(Math.floor(full / 2));
}

const DROP_LOG_INTERVAL_MS = 60_000;

/** A claim on a delivery lasts its attempt's time limit and this much more (a process starved, a slow write). */
const CLAIM_MARGIN_MS = 30_000;

/**
 * Turns events from the bus into persisted deliveries and works through them: at most
 * `concurrency` requests at once and one per webhook, so a slow receiver holds one slot and
 * delays nobody else. Enqueuing is a row insert; sending happens off the caller's path.
 * Pending deliveries are rows, so a restart picks them up again.
 *
 * The bus hands an event over synchronously, and queuing it awaits the database: events are queued one
 * after the other on one chain, in the order they came (a test delivery asked for takes its turn too), each
 * one's rows written before any of its attempts starts; one that cannot be queued is logged. `stop` waits
 * for the chain, so what was emitted before it (`daemon.stopping`) is written and its attempts started.
 */
export function createWebhookDispatcher({
  repository,
  sender,
  secrets,
  events,
  clock,
  logger,
  config,
}: {
  repository: WebhooksRepository;
  sender: WebhookSender;
  secrets: SecretBox;
  events: Events;
  clock: Clock;
  logger: Logger;
  config: WebhooksConfig;
}) {
  const inFlight = new Map<string, Promise<void>>();
  const busyWebhooks = new Set<string>();
  const drops = new Map<string, { count: number; loggedAt: number }>();
  let unsubscribe: (() => void) | undefined;
  /** A stop began: no more events are taken. */
  let closing = false;
  /** No more attempts start. */
  let stopped = false;

  /** The end of the chain of deliveries being queued (it never rejects), and how many are on it. */
  let queue: Promise<void> = Promise.resolve();
  let queuing = 0;
  function inTurn<T>(work: () => Promise<T>): Promise<T> {
    queuing += 1;
    const done = queue.then(work);
    queue = done.then(
      () => void (queuing -= 1),
      () => void (queuing -= 1),
    );
    return done;
  }

  async function enqueue(webhook: WebhookRow, event: WebhookEvent): Promise<Enqueued> {
    const now = clock.now();
    const enqueued = await repository.enqueueDelivery(
      {
        id: createId('whd', now),
        webhookId: webhook.id,
        eventId: event.id,
        event: event.event,
        body: webhookBody(webhook.format, event),
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
        createdAt: now,
      },
      config.maxPending,
    );
    if ('full' in enqueued) noteDrop(webhook.id, event.event, enqueued.pending);
    return enqueued;
  }

  /** Logged at most once a minute per webhook, with the number dropped since the last line. */
  function noteDrop(webhookId: string, event: string, pending: number) {
    const now = clock.now().getTime();
    const entry = drops.get(webhookId) ?? { count: 0, loggedAt: Number.NEGATIVE_INFINITY };
    entry.count += 1;
    if (now - entry.loggedAt >= DROP_LOG_INTERVAL_MS) {
      events.emit('webhook.deliveries_dropped', { webhookId, droppedEvent: event, pending, dropped: entry.count });
      entry.count = 0;
      entry.loggedAt = now;
    }
    drops.set(webhookId, entry);
  }

  function onEvent(published: PublishedEvent) {
    if (closing || isWebhookEvent(published.event)) return;
    const now = clock.now();
    inTurn(() => queueEvent(published, now)).catch((error: unknown) =>
      logger.error({ err: error, subscribedEvent: published.event }, 'an event could not be queued for its webhooks'),
    );
  }

  async function queueEvent(published: PublishedEvent, now: Date) {
    const subscribed = (await repository.all()).filter(
      (webhook) => webhook.events.includes('*') || webhook.events.includes(published.event),
    );
    if (subscribed.length === 0) return;
    const event: WebhookEvent = {
      id: createId('evt', now),
      event: published.event,
      occurredAt: now.toISOString(),
      data: published.fields,
    };
    for (const webhook of subscribed) await enqueue(webhook, event);
    void pump();
  }

  // One pump at a time: a pump asked for while one runs makes it read again once it is done, so no two
  // start a delivery from the same read. It never rejects (a failed read is logged; the next tick retries).
  let pumping: Promise<void> | undefined;
  let pumpAgain = false;
  /** Starts every due delivery a free slot allows. */
  function pump(): Promise<void> {
    if (pumping) {
      pumpAgain = true;
      return pumping;
    }
    const run = (async () => {
      try {
        do {
          pumpAgain = false;
          await startDue();
        } while (pumpAgain && !stopped);
      } catch (error) {
        logger.error({ err: error }, 'the webhook deliveries due could not be read');
      } finally {
        pumping = undefined;
      }
    })();
    // `run` is still at its first await here, so its `finally` comes after this.
    pumping = run;
    return run;
  }

  async function startDue() {
    while (!stopped && inFlight.size < config.concurrency) {
      const due = await repository.due({
        now: clock.now(),
        exclude: [...busyWebhooks],
        limit: config.concurrency - inFlight.size,
      });
      let started = 0;
      for (const delivery of due) {
        if (stopped || busyWebhooks.has(delivery.webhookId) || inFlight.size >= config.concurrency) continue;
        start(delivery);
        started += 1;
      }
      if (started === 0) return;
    }
  }

  function start(delivery: DeliveryRow) {
    busyWebhooks.add(delivery.webhookId);
    const attempt = attemptDelivery(delivery)
      .catch((error: unknown) =>
        logger.error({ err: error, deliveryId: delivery.id }, 'a webhook delivery attempt failed unexpectedly'),
      )
      .finally(() => {
        inFlight.delete(delivery.id);
        busyWebhooks.delete(delivery.webhookId);
        void pump();
      });
    inFlight.set(delivery.id, attempt);
  }

  async function attemptDelivery(due: DeliveryRow) {
    // Taken first: in a cluster every process's pump reads the same due rows, and only one may send each.
    const claimedUntil = new Date(clock.now().getTime() + config.timeoutMs + CLAIM_MARGIN_MS);
    const delivery = await repository.claimDelivery(due.id, { dueBy: clock.now(), until: claimedUntil });
    if (!delivery) return; // attempted or taken elsewhere since it was read, or gone with its webhook
    const webhook = await repository.find(delivery.webhookId);
    if (!webhook) return; // deleted meanwhile; its deliveries went with it
    const attemptAt = clock.now();
    let outcome: SendOutcome;
    try {
      outcome = await sender.send({
        url: webhook.url,
        headers: signedHeaders(webhook, delivery, attemptAt),
        body: delivery.body,
      });
    } catch (error) {
      // e.g. a secret sealed with another key: a failed attempt like any other, never a hot loop.
      outcome = {
        ok: false,
        status: null,
        cause: 'protocol',
        error: `the request could not be prepared: ${(error as Error).message}`,
        durationMs: 0,
        aborted: false,
      };
    }
    // Cut short by a shutdown: given back pending, as if never tried, due at once at the next start.
    if (outcome.aborted) {
      await repository.releaseClaim(delivery.id, claimedUntil, clock.now());
      return;
    }

    const attempts = delivery.attempts + 1;
    const result = {
      attempts,
      lastStatus: outcome.status,
      lastCause: outcome.cause,
      lastError: outcome.error,
      lastDurationMs: outcome.durationMs,
      lastAttemptAt: attemptAt,
    };
    const now = clock.now();
    const end = outcome.ok
      ? { status: 'succeeded' as const, nextAttemptAt: null, finishedAt: now }
      : attempts >= config.maxAttempts
        ? { status: 'failed' as const, nextAttemptAt: null, finishedAt: now }
        : { nextAttemptAt: new Date(now.getTime() + retryDelayMs(attempts)) };
    if (!(await repository.finishAttempt(delivery.id, claimedUntil, { ...result, ...end }))) {
      // The attempt outlived its claim (this process starved past it) and another took the delivery since.
      logger.warn(
        { deliveryId: delivery.id, webhookId: webhook.id },
        'a webhook delivery attempt ended after its claim',
      );
      return;
    }
    if (end.status === 'failed')
      events.emit('webhook.delivery_failed', {
        webhookId: webhook.id,
        deliveryId: delivery.id,
        deliveryEvent: delivery.event,
        target: new URL(webhook.url).origin,
        attempts,
        cause: outcome.cause,
        httpStatus: outcome.status,
      });
  }

  function signedHeaders(webhook: WebhookRow, delivery: DeliveryRow, at: Date): Record<string, string> {
    const timestamp = Math.floor(at.getTime() / 1000);
    const headers: Record<string, string> = {
      'sitewarden-delivery': delivery.id,
      'sitewarden-event': delivery.event,
      'sitewarden-timestamp': String(timestamp),
    };
    if (webhook.sealedSecret)
      headers['sitewarden-signature'] = signature(secrets.open(webhook.sealedSecret), timestamp, delivery.body);
    return headers;
  }

  return {
    /** Subscribes to the bus and starts what a previous run left pending (resolves once it is read). */
    start(): Promise<void> {
      closing = false;
      stopped = false;
      unsubscribe ??= events.subscribe(onEvent);
      return pump();
    },
    /**
     * Queues a delivery of `event` to one webhook, whatever it subscribes to (the test endpoint), in turn
     * with the events' deliveries; `full` when its backlog is, `gone` when the webhook was removed meanwhile.
     */
    async deliver(webhook: WebhookRow, event: WebhookEvent): Promise<Enqueued> {
      const enqueued = await inTurn(() => enqueue(webhook, event));
      void pump();
      return enqueued;
    },
    /** The scheduler's tick: starts retries that fell due. */
    tick: (): Promise<void> => pump(),
    /** Resolves once nothing is being queued, read or attempted (tests, shutdown). */
    async idle() {
      while (queuing > 0 || pumping || inFlight.size > 0) await Promise.all([queue, pumping, ...inFlight.values()]);
    },
    /** Retention of finished deliveries; how many went. */
    prune(): Promise<number> {
      return repository.pruneFinished(new Date(clock.now().getTime() - config.retentionDays * 86_400_000));
    },
    /**
     * Stops taking events; waits for those taken to be queued and their attempts started; lets attempts in
     * flight finish for up to `graceMs` (so `daemon.stopping` gets out), then cuts them short; those stay
     * pending for the next start.
     */
    async stop(graceMs = 0) {
      closing = true;
      unsubscribe?.();
      unsubscribe = undefined;
      while (queuing > 0) await queue;
      await pumping;
      stopped = true;
      if (graceMs > 0 && inFlight.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.all([...inFlight.values()]),
          new Promise((resolve) => (timer = setTimeout(resolve, graceMs))),
        ]);
        clearTimeout(timer);
      }
      await sender.close();
      await Promise.all([...inFlight.values()]);
      await pumping;
    },
  };
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;
