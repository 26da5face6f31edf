import { eventCatalogue, type EventName, type FieldsOf } from './events.js';

/** A catalogued event as emitted, for subscribers (the log writer, webhooks). */
export interface PublishedEvent {
  event: string;
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  /** Only when the emitter gave one; the log line's message defaults to the event name. */
  message?: string;
}

type EventSubscriber = (event: PublishedEvent) => void;

export interface Events {
  /** Emits a catalogued event at its catalogued level with its documented fields. */
  emit<E extends EventName>(event: E, fields: FieldsOf<E> & Record<string, unknown>, message?: string): void;
  /**
   * Deferred subscribers (the default) run after the emitter's synchronous work; `inline` ones
   * run inside `emit`, in order (the log writer: a log line must not trail what happened after).
   * Returns the function that unsubscribes.
   */
  subscribe(subscriber: EventSubscriber, options?: { inline?: boolean; everywhere?: boolean }): () => void;
  /**
   * Hands over an event another process of the cluster emitted (src/db/event-fanout.ts): only the subscribers
   * that asked for every process's events (`everywhere`: the live pages) get it, deferred. What the emitter
   * alone does once (the log line, the audit entry, webhook deliveries) stays with the emitter's subscribers.
   */
  receive(event: PublishedEvent): void;
}

/**
 * Deferred subscribers get each event after the emitter's synchronous work is done (a
 * microtask), so they never run inside the caller's transaction, never delay it, and one that
 * throws reaches `onError`, never the caller. An inline subscriber that throws reaches
 * `onError` too.
 */
export function createEvents({ onError }: { onError?: (error: unknown, event: PublishedEvent) => void } = {}): Events {
  const inline = new Set<EventSubscriber>();
  const deferred = new Set<EventSubscriber>();
  /** The deferred subscribers that get other processes' events too. */
  const everywhere = new Set<EventSubscriber>();

  function deferTo(subscribers: ReadonlySet<EventSubscriber>, event: PublishedEvent) {
    if (subscribers.size === 0) return;
    const snapshot = [...subscribers];
    queueMicrotask(() => {
      for (const subscriber of snapshot) deliver(subscriber, event);
    });
  }

  function deliver(subscriber: EventSubscriber, event: PublishedEvent) {
    try {
      subscriber(event);
    } catch (error) {
      try {
        onError?.(error, event);
      } catch {
        // the error reporter itself failed; nothing more can be done without risking the caller
      }
    }
  }

  return {
    emit(event, fields, message) {
      const published: PublishedEvent = {
        event,
        level: eventCatalogue[event].level,
        fields: { ...fields },
        ...(message === undefined ? {} : { message }),
      };
      for (const subscriber of [...inline]) deliver(subscriber, published);
      deferTo(deferred, published);
    },
    subscribe(subscriber, options = {}) {
      const set = options.inline ? inline : deferred;
      set.add(subscriber);
      if (options.everywhere) everywhere.add(subscriber);
      return () => {
        set.delete(subscriber);
        everywhere.delete(subscriber);
      };
    },
    receive(event) {
      deferTo(everywhere, { ...event, fields: { ...event.fields } });
    },
  };
}
