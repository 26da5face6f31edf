import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLoggedEvents } from '../../src/shared/logger.js';
import { createSecretBox } from '../../src/shared/secret-box.js';
import { createWebhookDispatcher } from '../../src/webhooks/webhook-dispatcher.js';
import { createWebhookSender } from '../../src/webhooks/webhook-sender.js';
import { DEFAULT_WEBHOOKS_CONFIG } from '../../src/webhooks/webhooks.config.js';
import { createWebhooksRepository, type WebhooksRepository } from '../../src/webhooks/webhooks.repository.js';
import { dialects, stateDatabaseFor } from '../support/dialects.js';
import { createCapturedLogger } from '../support/log-capture.js';
import { loopbackNetwork } from '../support/network.js';
import { startWebhookReceiver, type Behaviour } from '../support/webhook-receiver.js';

/**
 * The dispatcher over the repository on both dialects (issue 34): the bus hands events over synchronously
 * and queuing them awaits the database, so they are queued one after the other in the order they came, each
 * delivery written before it is tried; a write that fails is logged, and a stop waits for what it took.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe.each(dialects)('the webhook dispatcher on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'webhook-dispatcher');

  async function setup({
    answers,
    repository = createWebhooksRepository(state()),
  }: { answers?: Behaviour[]; repository?: WebhooksRepository } = {}) {
    const logs = createCapturedLogger();
    const events = createLoggedEvents(logs.logger);
    const receiver = await startWebhookReceiver(answers);
    /** A dispatcher over `over`: another process's when given its own `bus`. */
    const dispatcherOn = (over: WebhooksRepository, bus = events) => {
      const dispatcher = createWebhookDispatcher({
        repository: over,
        sender: createWebhookSender({ network: loopbackNetwork, timeoutMs: 5_000, userAgent: 'test' }),
        secrets: createSecretBox(randomBytes(32)),
        events: bus,
        clock: { now: () => new Date() },
        logger: logs.logger,
        config: DEFAULT_WEBHOOKS_CONFIG,
      });
      cleanups.push(() => dispatcher.stop());
      return dispatcher;
    };
    cleanups.push(() => receiver.close());
    const now = new Date();
    const webhook = await repository.insert({
      id: 'whk_1',
      url: receiver.url,
      events: ['*'],
      format: 'json',
      createdAt: now,
      updatedAt: now,
    });
    const dispatcher = dispatcherOn(repository);
    await dispatcher.start();
    return { logs, events, receiver, repository, webhook, dispatcher, dispatcherOn };
  }

  const eventsOf = (bodies: { body: string }[]) => bodies.map((request) => JSON.parse(request.body).data.username);

  it('queues events emitted at once in their order, each delivery written before it is tried, and sends them', async () => {
    const { events, receiver, repository, dispatcher } = await setup();
    const names = Array.from({ length: 12 }, (_, i) => `user${i}`);
    for (const username of names) events.emit('user.created', { userId: `usr_${username}`, username, role: 'viewer' });
    await nextTurn();
    await dispatcher.idle();

    const deliveries = await repository.listDeliveries({ webhookId: 'whk_1', limit: 20 });
    // Newest first: the last event's delivery was written last.
    expect(deliveries.map((delivery) => JSON.parse(delivery.body).data.username)).toEqual([...names].reverse());
    expect(deliveries.every((delivery) => delivery.status === 'succeeded' && delivery.attempts === 1)).toBe(true);
    // One at a time per webhook, so the receiver got them in their order too.
    expect(eventsOf(receiver.received)).toEqual(names);
    for (const request of receiver.received)
      expect(deliveries.map((delivery) => delivery.id)).toContain(request.headers['sitewarden-delivery']);
  });

  it('logs a delivery that cannot be written, never an unhandled rejection, and queues the next event', async () => {
    const real = createWebhooksRepository(state());
    let failures = 1;
    const repository: WebhooksRepository = {
      ...real,
      enqueueDelivery: async (row, maxPending) => {
        if (failures-- > 0) throw new Error('the database is away');
        return real.enqueueDelivery(row, maxPending);
      },
    };
    const { events, logs, receiver, dispatcher } = await setup({ repository });
    events.emit('user.created', { userId: 'usr_lost', username: 'lost', role: 'viewer' });
    events.emit('user.created', { userId: 'usr_kept', username: 'kept', role: 'viewer' });
    await nextTurn();
    await dispatcher.idle();

    expect(eventsOf(receiver.received)).toEqual(['kept']);
    expect(logs.records()).toContainEqual(
      expect.objectContaining({
        level: 'error',
        subscribedEvent: 'user.created',
        msg: 'an event could not be queued for its webhooks',
        err: expect.objectContaining({ message: 'the database is away' }),
      }),
    );
  });

  it('writes the events taken before a stop and tries them within its grace (daemon.stopping gets out)', async () => {
    const real = createWebhooksRepository(state());
    // A slow write: the stop begins while the event is being queued.
    const repository: WebhooksRepository = {
      ...real,
      enqueueDelivery: async (row, maxPending) => {
        await pause(100);
        return real.enqueueDelivery(row, maxPending);
      },
    };
    const { events, receiver, dispatcher } = await setup({ repository });
    events.emit('daemon.stopping', { signal: 'SIGTERM' });
    await nextTurn();
    await dispatcher.stop(2_000);
    // Taken no more once stopped.
    events.emit('user.created', { userId: 'usr_late', username: 'late', role: 'viewer' });
    await nextTurn();
    await pause(150);

    expect(receiver.received.map((request) => JSON.parse(request.body).event)).toEqual(['daemon.stopping']);
    const deliveries = await real.listDeliveries({ webhookId: 'whk_1', limit: 10 });
    expect(deliveries).toMatchObject([{ event: 'daemon.stopping', status: 'succeeded', attempts: 1 }]);
  });

  it('sends a delivery once when two processes’ pumps read it due at once', async () => {
    // Each process's pump reads the due rows; here both read the delivery before either tries it.
    let reads = 0;
    let bothRead!: () => void;
    const met = new Promise<void>((resolve) => (bothRead = resolve));
    const meeting = (real: WebhooksRepository): WebhooksRepository => ({
      ...real,
      due: async (query) => {
        const rows = await real.due(query);
        if (rows.length === 0) return rows;
        if (++reads === 2) bothRead();
        await met;
        return rows;
      },
    });
    const { receiver, repository, dispatcher, dispatcherOn } = await setup({
      repository: meeting(createWebhooksRepository(state())),
    });
    const now = new Date();
    const enqueued = await repository.enqueueDelivery(
      {
        id: 'whd_once',
        webhookId: 'whk_1',
        eventId: 'evt_once',
        event: 'user.created',
        body: JSON.stringify({ event: 'user.created', data: { username: 'once' } }),
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
        createdAt: now,
      },
      10,
    );
    expect(enqueued).toHaveProperty('delivery');
    const other = dispatcherOn(
      meeting(createWebhooksRepository(state())),
      createLoggedEvents(createCapturedLogger().logger),
    );
    await Promise.all([dispatcher.tick(), other.start()]);
    await Promise.all([dispatcher.idle(), other.idle()]);

    expect(reads).toBe(2);
    expect(eventsOf(receiver.received)).toEqual(['once']);
    expect(await repository.findDelivery('whd_once')).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('keeps a delivery cut short by a stop pending, untried, and the next process sends it', async () => {
    const { events, receiver, repository, dispatcher, dispatcherOn } = await setup({ answers: ['hang'] });
    events.emit('user.created', { userId: 'usr_1', username: 'one', role: 'viewer' });
    // Its attempt hangs at the receiver.
    await vi.waitFor(() => expect(receiver.received).toHaveLength(1), { timeout: 5_000 });
    await dispatcher.stop();
    const [left] = await repository.listDeliveries({ webhookId: 'whk_1', limit: 10 });
    expect(left).toMatchObject({ status: 'pending', attempts: 0, lastAttemptAt: null });

    receiver.answer(200);
    const next = dispatcherOn(createWebhooksRepository(state()));
    await next.start();
    await next.idle();
    expect(await repository.findDelivery(left!.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(eventsOf(receiver.received)).toEqual(['one', 'one']);
  });
});
