import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createEventBus, eventBusOf, type PublishedEvent } from '../../src/shared/event-bus.js';
import { logEvent } from '../../src/shared/events.js';
import { createLogger } from '../../src/shared/logger.js';

const discard = () => new Writable({ write: (_chunk, _encoding, done) => done() });
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the in-process event bus', () => {
  it('hands every logEvent to subscribers, from child loggers too, whatever the log level', async () => {
    const bus = createEventBus();
    const logger = createLogger({ level: 'error', destination: discard(), events: bus });
    const received: PublishedEvent[] = [];
    bus.subscribe((event) => received.push(event));

    logEvent(logger, 'token.created', { tokenId: 'tok_1', name: 'ci', scope: 'read' });
    logEvent(logger.child({ component: 'sync' }), 'site.sync_failed', {
      siteId: 'site_1',
      url: 'http://127.0.0.1:1',
      reason: 'connect',
    });
    await settle();

    expect(received).toEqual([
      { event: 'token.created', level: 'info', fields: { tokenId: 'tok_1', name: 'ci', scope: 'read' } },
      {
        event: 'site.sync_failed',
        level: 'warn',
        fields: { siteId: 'site_1', url: 'http://127.0.0.1:1', reason: 'connect' },
      },
    ]);
  });

  it('runs subscribers after the caller, and a subscriber that throws reaches neither the caller nor the other subscribers', async () => {
    const errors: unknown[] = [];
    const bus = createEventBus({ onError: (error) => errors.push(error) });
    const logger = createLogger({ level: 'info', destination: discard(), events: bus });
    const order: string[] = [];
    bus.subscribe(() => {
      order.push('failing subscriber');
      throw new Error('subscriber bug');
    });
    bus.subscribe((event) => order.push(`second subscriber: ${event.event}`));

    expect(() => logEvent(logger, 'daemon.stopped', {})).not.toThrow();
    order.push('caller continues');
    await settle();

    expect(order).toEqual(['caller continues', 'failing subscriber', 'second subscriber: daemon.stopped']);
    expect(errors).toHaveLength(1);
  });

  it('stops delivering once unsubscribed, and gives a logger built without a bus its own', async () => {
    const logger = createLogger({ level: 'info', destination: discard() });
    const bus = eventBusOf(logger);
    expect(eventBusOf(logger.child({}))).toBe(bus);
    const received: string[] = [];
    const unsubscribe = bus.subscribe((event) => received.push(event.event));
    logEvent(logger, 'daemon.stopped', {});
    await settle();
    unsubscribe();
    logEvent(logger, 'daemon.stopped', {});
    await settle();
    expect(received).toEqual(['daemon.stopped']);
  });
});
