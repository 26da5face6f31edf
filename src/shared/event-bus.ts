import type { Logger } from 'pino';

/** A catalogued event as `logEvent` logged it, for in-process subscribers (webhooks). */
export interface PublishedEvent {
  event: string;
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
}

type EventSubscriber = (event: PublishedEvent) => void;

export interface EventBus {
  publish(event: PublishedEvent): void;
  /** Returns the function that unsubscribes. */
  subscribe(subscriber: EventSubscriber): () => void;
}

/**
 * Delivers each published event to every subscriber after the publisher's synchronous work
 * is done (a microtask), so a subscriber never runs inside the caller's transaction, never
 * delays it, and a subscriber that throws reaches `onError`, never the caller.
 */
export function createEventBus({
  onError,
}: { onError?: (error: unknown, event: PublishedEvent) => void } = {}): EventBus {
  const subscribers = new Set<EventSubscriber>();
  return {
    publish(event) {
      if (subscribers.size === 0) return;
      const snapshot = [...subscribers];
      const frozen: PublishedEvent = { event: event.event, level: event.level, fields: { ...event.fields } };
      queueMicrotask(() => {
        for (const subscriber of snapshot) {
          try {
            subscriber(frozen);
          } catch (error) {
            try {
              onError?.(error, frozen);
            } catch {
              // the error reporter itself failed; nothing more can be done without risking the caller
            }
          }
        }
      });
    },
    subscribe(subscriber) {
      subscribers.add(subscriber);
      return () => void subscribers.delete(subscriber);
    },
  };
}

/**
 * The bus travels with the logger: `logEvent(logger, …)` call sites stay as they are, and
 * pino's child loggers inherit it (a child is created with the parent as its prototype).
 */
const EVENT_BUS = Symbol('sitewarden.eventBus');
type WithBus = Logger & { [EVENT_BUS]?: EventBus };

export function attachEventBus(logger: Logger, bus: EventBus): EventBus {
  Object.defineProperty(logger, EVENT_BUS, { value: bus, enumerable: false, configurable: true, writable: false });
  return bus;
}

/** The logger's bus; a logger built without one gets its own on first use. */
export function eventBusOf(logger: Logger): EventBus {
  const existing = (logger as WithBus)[EVENT_BUS];
  if (existing) return existing;
  return attachEventBus(
    logger,
    createEventBus({
      onError: (error, event) =>
        logger.warn({ err: error, subscribedEvent: event.event }, 'an event subscriber failed'),
    }),
  );
}

/** For `logEvent`: publishes only when the logger carries a bus (nobody can be subscribed otherwise). */
export function publishToLoggerBus(logger: Logger, event: PublishedEvent): void {
  (logger as WithBus)[EVENT_BUS]?.publish(event);
}
