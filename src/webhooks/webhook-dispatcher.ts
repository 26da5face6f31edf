import { randomInt } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import type { Events, PublishedEvent } from '../shared/event-bus.js';
import { createId } from '../shared/ids.js';
import type { SecretBox } from '../shared/secret-box.js';
import { signature, webhookBody, type WebhookEvent } from './webhook-payload.js';
import type { SendOutcome, WebhookSender } from './webhook-sender.js';
import { RETRY_BASE_MS, RETRY_MAX_MS, type WebhooksConfig } from './webhooks.config.js';
import type { WebhooksRepository } from './webhooks.repository.js';
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

/**
 * Turns events from the bus into persisted deliveries and works through them: at most
 * `concurrency` requests at once and one per webhook, so a slow receiver holds one slot and
 * delays nobody else. Enqueuing is a row insert; sending happens off the caller's path.
 * Pending deliveries are rows, so a restart picks them up again.
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
  let stopped = false;

  function enqueue(webhook: WebhookRow, event: WebhookEvent): DeliveryRow | undefined {
    const pending = repository.pendingCount(webhook.id);
    if (pending >= config.maxPending) {
      noteDrop(webhook.id, event.event, pending);
      return undefined;
    }
    const now = clock.now();
    return repository.insertDelivery({
      id: createId('whd', now),
      webhookId: webhook.id,
      eventId: event.id,
      event: event.event,
      body: webhookBody(webhook.format, event),
      status: 'pending',
      attempts: 0,
      nextAttemptAt: now,
      createdAt: now,
    });
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
    if (stopped || isWebhookEvent(published.event)) return;
    const subscribed = repository
      .all()
      .filter((webhook) => webhook.events.includes('*') || webhook.events.includes(published.event));
    if (subscribed.length === 0) return;
    const now = clock.now();
    const event: WebhookEvent = {
      id: createId('evt', now),
      event: published.event,
      occurredAt: now.toISOString(),
      data: published.fields,
    };
    for (const webhook of subscribed) enqueue(webhook, event);
    pump();
  }

  /** Starts every due delivery a free slot allows. */
  function pump() {
    while (!stopped && inFlight.size < config.concurrency) {
      const due = repository.due({
        now: clock.now(),
        exclude: [...busyWebhooks],
        limit: config.concurrency - inFlight.size,
      });
      let started = 0;
      for (const delivery of due) {
        if (busyWebhooks.has(delivery.webhookId) || inFlight.size >= config.concurrency) continue;
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
        pump();
      });
    inFlight.set(delivery.id, attempt);
  }

  async function attemptDelivery(delivery: DeliveryRow) {
    const webhook = repository.find(delivery.webhookId);
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
    // Cut short by a shutdown: it stays pending, as if never tried, for the next start.
    if (outcome.aborted) return;

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
    if (outcome.ok) {
      repository.updateDelivery(delivery.id, { ...result, status: 'succeeded', nextAttemptAt: null, finishedAt: now });
    } else if (attempts >= config.maxAttempts) {
      repository.updateDelivery(delivery.id, { ...result, status: 'failed', nextAttemptAt: null, finishedAt: now });
      events.emit('webhook.delivery_failed', {
        webhookId: webhook.id,
        deliveryId: delivery.id,
        deliveryEvent: delivery.event,
        target: new URL(webhook.url).origin,
        attempts,
        cause: outcome.cause,
        httpStatus: outcome.status,
      });
    } else {
      repository.updateDelivery(delivery.id, {
        ...result,
        nextAttemptAt: new Date(now.getTime() + retryDelayMs(attempts)),
      });
    }
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
    /** Subscribes to the bus and sends what a previous run left pending. */
    start() {
      stopped = false;
      unsubscribe ??= events.subscribe(onEvent);
      pump();
    },
    /** Queues a delivery of `event` to one webhook, whatever it subscribes to (the test endpoint). */
    deliver(webhook: WebhookRow, event: WebhookEvent): DeliveryRow | undefined {
      const delivery = enqueue(webhook, event);
      pump();
      return delivery;
    },
    /** The scheduler's tick: starts retries that fell due. */
    tick: pump,
    /** Resolves once no attempt is in flight (tests, shutdown). */
    async idle() {
      while (inFlight.size > 0) await Promise.all([...inFlight.values()]);
    },
    /** Retention of finished deliveries. */
    prune(): number {
      return repository.pruneFinished(new Date(clock.now().getTime() - config.retentionDays * 86_400_000));
    },
    /**
     * Stops taking events, lets attempts in flight finish for up to `graceMs` (so `daemon.stopping`
     * gets out), then cuts them short; those stay pending for the next start.
     */
    async stop(graceMs = 0) {
      stopped = true;
      unsubscribe?.();
      unsubscribe = undefined;
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
    },
  };
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;
