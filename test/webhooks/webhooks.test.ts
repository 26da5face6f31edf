import { createHmac, timingSafeEqual } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { webhooks as webhooksTable } from '../../src/webhooks/webhooks.table.js';
import { createWebhookDispatcher, retryDelayMs } from '../../src/webhooks/webhook-dispatcher.js';
import { createWebhookSender } from '../../src/webhooks/webhook-sender.js';
import { createWebhooksRepository } from '../../src/webhooks/webhooks.repository.js';
import {
  DEFAULT_WEBHOOKS_CONFIG,
  RETRY_BASE_MS,
  RETRY_MAX_MS,
  type WebhooksConfig,
} from '../../src/webhooks/webhooks.config.js';
import { createFakeClock, createTestApp, type TestApp } from '../support/test-app.js';
import { startWebhookReceiver, type Behaviour } from '../support/webhook-receiver.js';
import { loopbackNetwork } from '../support/network.js';

const SECRET = 'whsec-correct-horse-battery-staple';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(options: { answers?: Behaviour[]; webhooks?: Partial<WebhooksConfig> } = {}) {
  const clock = createFakeClock(new Date('2026-03-01T12:00:00Z'));
  const t = createTestApp({ clock, config: { webhooks: { ...DEFAULT_WEBHOOKS_CONFIG, ...options.webhooks } } });
  const receiver = await startWebhookReceiver(options.answers);
  cleanups.push(async () => {
    await t.close();
    await receiver.close();
  });
  await t.services.webhookDispatcher.start();
  return { t, clock, receiver };
}

/** Lets the event bus hand events over, then waits for every delivery attempt in flight. */
async function settled(t: TestApp) {
  await new Promise((resolve) => setImmediate(resolve));
  await t.services.webhookDispatcher.idle();
}

async function addWebhook(t: TestApp, body: Record<string, unknown>) {
  const created = await t.call('POST', '/api/webhooks', { json: body });
  expect(created.status, created.text).toBe(201);
  return created.json as { id: string; hasSecret: boolean };
}

const deliveriesOf = async (t: TestApp, id: string) =>
  (await t.call('GET', `/api/webhooks/${id}/deliveries`)).json.items;

describe('webhooks', () => {
  it('delivers an event as signed JSON that the receiver can verify with the shared secret', async () => {
    const { t, clock, receiver } = await setup();
    const webhook = await addWebhook(t, { url: receiver.url, events: ['token.created'], secret: SECRET });

    const token = (await t.services.tokens.create('ci', 'read')).summary;
    await settled(t);

    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    const timestamp = request!.headers['sitewarden-timestamp'] as string;
    expect(Number(timestamp)).toBe(Math.floor(clock.now().getTime() / 1000));
    // Verified the way a receiver would, independently of Sitewarden's code.
    const expected = Buffer.from(
      `v1=${createHmac('sha256', SECRET).update(`${timestamp}.${request!.body}`).digest('hex')}`,
    );
    const given = Buffer.from(request!.headers['sitewarden-signature'] as string);
    expect(given.length === expected.length && timingSafeEqual(given, expected)).toBe(true);
    expect(request!.method).toBe('POST');
    expect(request!.headers['content-type']).toBe('application/json');

    const payload = JSON.parse(request!.body);
    expect(payload).toEqual({
      id: expect.stringMatching(/^evt_/),
      event: 'token.created',
      occurredAt: '2026-03-01T12:00:00.000Z',
      data: { tokenId: token.id, name: 'ci', scope: 'read', role: 'viewer', userId: null, tags: null },
    });

    const [delivery] = await deliveriesOf(t, webhook.id);
    expect(request!.headers['sitewarden-delivery']).toBe(delivery.id);
    expect(delivery).toMatchObject({
      event: 'token.created',
      eventId: payload.id,
      status: 'succeeded',
      attempts: 1,
      nextAttemptAt: null,
      lastAttempt: { status: 200, cause: null, error: null },
    });
    // Events a webhook does not subscribe to are not sent.
    await t.services.tokens.revoke(token.id);
    await settled(t);
    expect(receiver.received).toHaveLength(1);
  });

  it('retries a failed delivery after an exponential backoff, and the deliveries list shows every attempt', async () => {
    const { t, clock, receiver } = await setup({ answers: [500, 200] });
    const webhook = await addWebhook(t, { url: receiver.url, events: ['*'] });

    await t.services.tokens.create('ci', 'read');
    await settled(t);
    let [delivery] = await deliveriesOf(t, webhook.id);
    expect(delivery).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastAttempt: { status: 500, cause: 'http_status' },
    });
    const retryAt = new Date(delivery.nextAttemptAt).getTime() - clock.now().getTime();
    expect(retryAt).toBeGreaterThanOrEqual(RETRY_BASE_MS / 2);
    expect(retryAt).toBeLessThanOrEqual(RETRY_BASE_MS);

    // Not before its time...
    await t.services.webhookDispatcher.tick();
    await settled(t);
    expect(receiver.received).toHaveLength(1);
    // ...then on the tick after it.
    clock.advance(RETRY_BASE_MS);
    await t.services.webhookDispatcher.tick();
    await settled(t);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
    expect(receiver.received[1]!.headers['sitewarden-delivery']).toBe(
      receiver.received[0]!.headers['sitewarden-delivery'],
    );

    [delivery] = await deliveriesOf(t, webhook.id);
    expect(delivery).toMatchObject({
      status: 'succeeded',
      attempts: 2,
      nextAttemptAt: null,
      lastAttempt: { status: 200, cause: null },
      finishedAt: clock.now().toISOString(),
    });
  });

  it('backs off exponentially with jitter, up to a cap', () => {
    expect(retryDelayMs(1, () => 0)).toBe(RETRY_BASE_MS / 2);
    expect(retryDelayMs(1, (max) => max)).toBe(RETRY_BASE_MS);
    expect(retryDelayMs(3, (max) => max)).toBe(RETRY_BASE_MS * 4);
    expect(retryDelayMs(40, (max) => max)).toBe(RETRY_MAX_MS);
  });

  it('gives up after the configured attempts, logs webhook.delivery_failed, and never delivers webhook events by webhook', async () => {
    const { t, clock, receiver } = await setup({ answers: [503], webhooks: { maxAttempts: 3 } });
    const webhook = await addWebhook(t, { url: receiver.url, events: ['*'] });

    await t.services.tokens.create('ci', 'read');
    await settled(t);
    for (let attempt = 2; attempt <= 3; attempt++) {
      clock.advance(RETRY_MAX_MS);
      await t.services.webhookDispatcher.tick();
      await settled(t);
    }
    clock.advance(RETRY_MAX_MS);
    await t.services.webhookDispatcher.tick();
    await settled(t);

    expect(receiver.received).toHaveLength(3);
    expect(receiver.received.every((request) => JSON.parse(request.body).event === 'token.created')).toBe(true);
    const [delivery] = await deliveriesOf(t, webhook.id);
    expect(delivery).toMatchObject({
      status: 'failed',
      attempts: 3,
      nextAttemptAt: null,
      lastAttempt: { status: 503, cause: 'http_status' },
    });
    const [failed] = t.logs.events('webhook.delivery_failed');
    expect(failed).toMatchObject({
      level: 'warn',
      webhookId: webhook.id,
      deliveryId: delivery.id,
      deliveryEvent: 'token.created',
      target: new URL(receiver.url).origin,
      attempts: 3,
      cause: 'http_status',
      httpStatus: 503,
    });
    expect(t.logs.raw()).not.toContain('/hooks/sitewarden');
  });

  it('a receiver that never answers times out without delaying the API or other webhooks, and one that floods is read only so far', async () => {
    const { t, receiver: hanging } = await setup({ answers: ['hang'], webhooks: { timeoutMs: 800 } });
    const healthy = await startWebhookReceiver([200]);
    const flooding = await startWebhookReceiver(['flood']);
    cleanups.push(
      () => healthy.close(),
      () => flooding.close(),
    );
    const slow = await addWebhook(t, { url: hanging.url, events: ['token.created'] });
    const fast = await addWebhook(t, { url: healthy.url, events: ['token.created'] });
    const huge = await addWebhook(t, { url: flooding.url, events: ['token.created'] });

    const started = performance.now();
    await t.services.tokens.create('ci', 'read');
    await new Promise((resolve) => setImmediate(resolve));
    const listed = await t.call('GET', '/api/webhooks');
    const apiMs = performance.now() - started;
    expect(listed.status).toBe(200);
    expect(apiMs).toBeLessThan(400);

    await t.services.webhookDispatcher.idle();
    const totalMs = performance.now() - started;
    expect(totalMs).toBeGreaterThanOrEqual(750);
    expect(totalMs).toBeLessThan(5000);
    const [timedOut] = await deliveriesOf(t, slow.id);
    expect(timedOut).toMatchObject({ status: 'pending', attempts: 1, lastAttempt: { status: null, cause: 'timeout' } });
    expect(timedOut.lastAttempt.durationMs).toBeGreaterThanOrEqual(750);
    const [delivered] = await deliveriesOf(t, fast.id);
    expect(delivered).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(delivered.lastAttempt.durationMs).toBeLessThan(500);
    const [flooded] = await deliveriesOf(t, huge.id);
    expect(flooded).toMatchObject({ status: 'succeeded', attempts: 1, lastAttempt: { status: 200 } });
    expect(flooded.lastAttempt.durationMs).toBeLessThan(750);
  });

  it('sends a slack-format webhook one readable line', async () => {
    const { t, receiver } = await setup();
    await addWebhook(t, { url: receiver.url, events: ['token.created'], format: 'slack' });
    const token = (await t.services.tokens.create('deploy bot', 'write')).summary;
    await settled(t);
    const body = JSON.parse(receiver.received[0]!.body);
    expect(Object.keys(body)).toEqual(['text']);
    expect(body.text).toBe(
      `Sitewarden token.created (tokenId: ${token.id}, name: deploy bot, scope: write, role: owner)`,
    );
    expect(body.text).not.toContain('\n');
  });

  it('sends a test delivery on request', async () => {
    const { t, receiver } = await setup();
    const webhook = await addWebhook(t, { url: receiver.url, events: ['site.down'], secret: SECRET });
    const queued = await t.call('POST', `/api/webhooks/${webhook.id}/test`);
    expect(queued.status).toBe(202);
    expect(queued.json).toMatchObject({ event: 'webhook.test', status: 'pending', attempts: 0 });
    await settled(t);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({
      event: 'webhook.test',
      data: { webhookId: webhook.id },
    });
    expect((await deliveriesOf(t, webhook.id))[0]).toMatchObject({ id: queued.json.id, status: 'succeeded' });
  });

  it('never returns or logs the secret, and stores it sealed', async () => {
    const { t } = await setup();
    const created = await t.call('POST', '/api/webhooks', {
      json: { url: 'http://127.0.0.1:9/hook', events: ['site.down'], secret: SECRET },
    });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      id: expect.stringMatching(/^whk_/),
      url: 'http://127.0.0.1:9/hook',
      events: ['site.down'],
      format: 'json',
      hasSecret: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const id = created.json.id;
    const answers = [
      created,
      await t.call('GET', `/api/webhooks/${id}`),
      await t.call('GET', '/api/webhooks'),
      await t.call('PATCH', `/api/webhooks/${id}`, { json: { secret: `${SECRET}-rotated` } }),
    ];
    for (const answer of answers) expect(answer.text).not.toContain(SECRET);
    expect(t.logs.raw()).not.toContain(SECRET);
    const [row] = t.database.db.select().from(webhooksTable).all();
    expect(row!.sealedSecret).not.toContain(SECRET);
    expect(t.services.secrets.open(row!.sealedSecret!)).toBe(`${SECRET}-rotated`);

    const removed = await t.call('PATCH', `/api/webhooks/${id}`, {
      json: { secret: null, events: ['*'], format: 'slack' },
    });
    expect(removed.json).toMatchObject({ hasSecret: false, events: ['*'], format: 'slack' });
  });

  it('rejects invalid webhooks with validation problems that say what is wrong', async () => {
    const { t } = await setup();
    const attempt = (json: unknown) => t.call('POST', '/api/webhooks', { json });
    const cases: { json: unknown; field: string; message: RegExp }[] = [
      {
        json: { url: 'http://127.0.0.1:9/h', events: ['site.dwon'] },
        field: 'events.0',
        message: /unknown event "site\.dwon"/,
      },
      {
        json: { url: 'http://127.0.0.1:9/h', events: ['webhook.delivery_failed'] },
        field: 'events.0',
        message: /never delivered by one/,
      },
      { json: { url: 'http://127.0.0.1:9/h', events: [] }, field: 'events', message: /at least one/ },
      { json: { url: 'http://127.0.0.1:9/h', events: ['site.up', 'site.up'] }, field: 'events', message: /twice/ },
      {
        json: { url: 'http://127.0.0.1:9/h', events: ['*'], secret: 'short' },
        field: 'secret',
        message: /at least 16/,
      },
      { json: { url: 'http://127.0.0.1:9/h', events: ['*'], format: 'xml' }, field: 'format', message: /json|slack/ },
    ];
    for (const { json, field, message } of cases) {
      const answer = await attempt(json);
      expect(answer.status, JSON.stringify(json)).toBe(400);
      expect(answer.json.type).toBe('/problems/validation-failed');
      expect(answer.json.errors, JSON.stringify(json)).toContainEqual(
        expect.objectContaining({ field, message: expect.stringMatching(message) }),
      );
    }
    const missing = await t.call('PATCH', '/api/webhooks/whk_01jc0z6x8m3yq4x0h7a9b2c3d4', { json: { events: ['*'] } });
    expect(missing.status).toBe(404);
    expect(missing.json.type).toBe('/problems/webhook-not-found');
    const readOnly = await t.call('GET', '/api/webhooks', { token: t.readToken });
    expect(readOnly.status).toBe(403);
  });

  it('refuses an unusable URL with a 422 that says why, on create and on change, and stores nothing', async () => {
    const { t } = await setup();
    const kept = await addWebhook(t, { url: 'http://127.0.0.1:9/h', events: ['*'] });
    const cases: { url: string; reason: RegExp }[] = [
      { url: 'ftp://127.0.0.1/h', reason: /http:\/\/ or https:\/\// },
      { url: 'javascript:alert(1)', reason: /http:\/\/ or https:\/\// },
      { url: 'http://[::1', reason: /not a URL/ },
      { url: 'http://a b/', reason: /not a URL/ },
      { url: '', reason: /not a URL/ },
      { url: `http://127.0.0.1/${'a'.repeat(100_000)}`, reason: /100017 characters long; at most 2048/ },
      { url: 'http://user:pw@127.0.0.1:9/h', reason: /user name or password/ },
    ];
    for (const { url, reason } of cases) {
      for (const answer of [
        await t.call('POST', '/api/webhooks', { json: { url, events: ['*'] } }),
        await t.call('PATCH', `/api/webhooks/${kept.id}`, { json: { url } }),
      ]) {
        expect(answer.status, url.slice(0, 40)).toBe(422);
        expect(answer.headers.get('content-type')).toBe('application/problem+json');
        expect(answer.json).toMatchObject({
          type: '/problems/invalid-webhook-url',
          title: 'The webhook URL is not usable',
          status: 422,
          field: 'url',
        });
        expect(answer.json.detail).toMatch(reason);
      }
    }
    expect((await t.call('GET', '/api/webhooks')).json.items.map((webhook: { url: string }) => webhook.url)).toEqual([
      'http://127.0.0.1:9/h',
    ]);
  });

  it('removes a webhook with its deliveries, and prunes finished deliveries after the retention', async () => {
    const { t, clock, receiver } = await setup({ webhooks: { retentionDays: 2 } });
    const kept = await addWebhook(t, { url: receiver.url, events: ['token.created'] });
    const removed = await addWebhook(t, { url: receiver.url, events: ['token.created'] });
    await t.services.tokens.create('ci', 'read');
    await settled(t);
    expect(await deliveriesOf(t, kept.id)).toHaveLength(1);

    expect((await t.call('DELETE', `/api/webhooks/${removed.id}`)).status).toBe(204);
    expect((await t.call('GET', `/api/webhooks/${removed.id}/deliveries`)).status).toBe(404);

    clock.advance(86_400_000);
    expect(await t.services.webhookDispatcher.prune()).toBe(0);
    clock.advance(86_400_000 + 1);
    expect(await t.services.webhookDispatcher.prune()).toBe(1);
    expect(await deliveriesOf(t, kept.id)).toHaveLength(0);
  });

  it('keeps deliveries pending across a restart, and drops new ones (logged) past the per-webhook cap', async () => {
    const { t, receiver } = await setup({ answers: ['hang'], webhooks: { maxPending: 1 } });
    const webhook = await addWebhook(t, { url: receiver.url, events: ['token.created', 'token.revoked'] });
    const token = (await t.services.tokens.create('ci', 'read')).summary;
    await new Promise((resolve) => setImmediate(resolve));
    await t.services.tokens.revoke(token.id);
    await new Promise((resolve) => setImmediate(resolve));
    expect(t.logs.events('webhook.deliveries_dropped')).toEqual([
      expect.objectContaining({
        level: 'error',
        webhookId: webhook.id,
        droppedEvent: 'token.revoked',
        pending: 1,
        dropped: 1,
      }),
    ]);

    // A test delivery asked for then is refused, with the same cap.
    const refused = await t.call('POST', `/api/webhooks/${webhook.id}/test`);
    expect(refused.status).toBe(409);
    expect(refused.json.type).toBe('/problems/webhook-backlog-full');

    // The daemon stops while the attempt hangs: it is cut short and stays pending, untried.
    await t.services.webhookDispatcher.stop();
    let [delivery] = await deliveriesOf(t, webhook.id);
    expect(delivery).toMatchObject({ event: 'token.created', status: 'pending', attempts: 0 });

    // The next process (a new dispatcher on the same database) sends it.
    receiver.answer(200);
    const restarted = createWebhookDispatcher({
      repository: createWebhooksRepository(t.state),
      sender: createWebhookSender({ network: loopbackNetwork, timeoutMs: 5_000, userAgent: 'test' }),
      secrets: t.services.secrets,
      events: t.services.events,
      clock: t.clock,
      logger: t.logs.logger,
      config: DEFAULT_WEBHOOKS_CONFIG,
    });
    cleanups.push(() => restarted.stop());
    await restarted.start();
    await restarted.idle();
    [delivery] = await deliveriesOf(t, webhook.id);
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(JSON.parse(receiver.received.at(-1)!.body).event).toBe('token.created');
  });
});
