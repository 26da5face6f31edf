import { sql } from 'drizzle-orm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { rowsOf } from '../../src/db/dialect.js';
import type {
  webhookDeliveries as pgDeliveries,
  webhooks as pgWebhooks,
} from '../../src/webhooks/webhooks.pg-table.js';
import { createWebhooksRepository } from '../../src/webhooks/webhooks.repository.js';
import type { DeliveryRow, NewDeliveryRow, NewWebhookRow, WebhookRow } from '../../src/webhooks/webhooks.table.js';
import { dialects, stateDatabaseFor } from '../support/dialects.js';

/**
 * Webhooks and their deliveries on both dialects (issue 34, docs/design/cluster-state.md): one test body on
 * SQLite `:memory:` and on a database of the run's PostgreSQL cluster (test/support/dialects.ts).
 */
const at = (ms: number) => new Date(Date.UTC(2026, 2, 1, 12) + ms);
const webhook = (id: string, fields: Partial<NewWebhookRow> = {}): NewWebhookRow => ({
  id,
  url: `https://hooks.example/${id}`,
  events: ['site.down', 'backup.failed'],
  format: 'json',
  sealedSecret: null,
  createdAt: at(0),
  updatedAt: at(0),
  ...fields,
});
const delivery = (id: string, webhookId: string, fields: Partial<NewDeliveryRow> = {}): NewDeliveryRow => ({
  id,
  webhookId,
  eventId: `evt_${id}`,
  event: 'site.down',
  body: '{"event":"site.down"}',
  status: 'pending',
  attempts: 0,
  nextAttemptAt: at(0),
  createdAt: at(0),
  ...fields,
});
/** The row `enqueueDelivery` wrote; fails the test when it wrote none. */
const written = (enqueued: Awaited<ReturnType<ReturnType<typeof createWebhooksRepository>['enqueueDelivery']>>) => {
  if (!('delivery' in enqueued)) throw new Error(`no delivery written: ${JSON.stringify(enqueued)}`);
  return enqueued.delivery;
};

describe('the webhooks tables of PostgreSQL', () => {
  it('have the SQLite tables’ row types, so the repository reads and writes the same rows on both', () => {
    expectTypeOf<typeof pgWebhooks.$inferSelect>().toEqualTypeOf<WebhookRow>();
    expectTypeOf<typeof pgWebhooks.$inferInsert>().toEqualTypeOf<NewWebhookRow>();
    expectTypeOf<typeof pgDeliveries.$inferSelect>().toEqualTypeOf<DeliveryRow>();
    expectTypeOf<typeof pgDeliveries.$inferInsert>().toEqualTypeOf<NewDeliveryRow>();
  });
});

describe.each(dialects)('the webhooks repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'webhooks-repository');

  it('writes, finds, changes and removes a webhook; its event names are JSON, its dates to the millisecond', async () => {
    const repository = createWebhooksRepository(state());
    const inserted = await repository.insert(
      webhook('whk_1', { events: ['*'], createdAt: at(123), updatedAt: at(123) }),
    );
    expect(inserted).toEqual({
      id: 'whk_1',
      url: 'https://hooks.example/whk_1',
      events: ['*'],
      format: 'json',
      sealedSecret: null,
      createdAt: at(123),
      updatedAt: at(123),
    });
    expect(await repository.find('whk_1')).toEqual(inserted);
    expect(await repository.find('whk_none')).toBeUndefined();
    const [stored] = await state().run((db) =>
      rowsOf<{ kind: string }>(
        state(),
        db,
        dialect === 'postgres'
          ? sql`select jsonb_typeof(events) as kind from webhooks`
          : sql`select json_type(events) as kind from webhooks`,
      ),
    );
    expect(stored!.kind).toBe('array');

    const changed = await repository.update('whk_1', {
      events: ['site.up'],
      format: 'slack',
      sealedSecret: 'sealed',
      updatedAt: at(456),
    });
    expect(changed).toEqual({
      ...inserted,
      events: ['site.up'],
      format: 'slack',
      sealedSecret: 'sealed',
      updatedAt: at(456),
    });
    expect(await repository.find('whk_1')).toEqual(changed);
    expect(await repository.update('whk_none', { url: 'https://else.example/' })).toBeUndefined();

    expect(await repository.delete('whk_1')).toBe(true);
    expect(await repository.delete('whk_1')).toBe(false);
    expect(await repository.find('whk_1')).toBeUndefined();
  });

  it('lists webhooks newest first by pages, and every one oldest first, each write seen at the next read', async () => {
    const repository = createWebhooksRepository(state());
    for (const id of ['whk_1', 'whk_2', 'whk_3']) await repository.insert(webhook(id));
    const ids = (rows: readonly { id: string }[]) => rows.map((row) => row.id);
    expect(ids(await repository.list({ limit: 2 }))).toEqual(['whk_3', 'whk_2']);
    expect(ids(await repository.list({ limit: 2, before: 'whk_2' }))).toEqual(['whk_1']);

    expect(ids(await repository.all())).toEqual(['whk_1', 'whk_2', 'whk_3']);
    await repository.update('whk_2', { events: ['site.up'] });
    expect((await repository.all()).find((row) => row.id === 'whk_2')!.events).toEqual(['site.up']);
    await repository.delete('whk_1');
    // A read that overlaps a write is not kept as the copy.
    const overlapping = repository.all();
    await repository.insert(webhook('whk_4'));
    await overlapping;
    expect(ids(await repository.all())).toEqual(['whk_2', 'whk_3', 'whk_4']);

    // Another process's write (another repository on the same database): seen at once on PostgreSQL, where
    // no copy is kept; on SQLite one process, whose repository is the only writer, keeps it.
    await createWebhooksRepository(state()).insert(webhook('whk_5'));
    expect(ids(await repository.all())).toEqual(
      dialect === 'postgres' ? ['whk_2', 'whk_3', 'whk_4', 'whk_5'] : ['whk_2', 'whk_3', 'whk_4'],
    );
  });

  it('queues a delivery only while its webhook has fewer than the cap waiting, and none for a webhook gone', async () => {
    const repository = createWebhooksRepository(state());
    await repository.insert(webhook('whk_1'));
    await repository.insert(webhook('whk_2'));
    const first = written(await repository.enqueueDelivery(delivery('whd_1', 'whk_1', { createdAt: at(7) }), 2));
    expect(first).toEqual({
      ...delivery('whd_1', 'whk_1', { createdAt: at(7) }),
      lastStatus: null,
      lastCause: null,
      lastError: null,
      lastDurationMs: null,
      lastAttemptAt: null,
      finishedAt: null,
    });
    expect(await repository.findDelivery('whd_1')).toEqual(first);
    written(await repository.enqueueDelivery(delivery('whd_2', 'whk_1'), 2));
    expect(await repository.enqueueDelivery(delivery('whd_3', 'whk_1'), 2)).toEqual({ full: true, pending: 2 });
    // Another webhook's backlog is its own; finished deliveries do not count.
    written(await repository.enqueueDelivery(delivery('whd_4', 'whk_2'), 2));
    await repository.updateDelivery('whd_1', { status: 'succeeded', finishedAt: at(10) });
    written(await repository.enqueueDelivery(delivery('whd_5', 'whk_1'), 2));
    expect(await repository.enqueueDelivery(delivery('whd_6', 'whk_none'), 2)).toEqual({ gone: true });
    expect(await repository.findDelivery('whd_3')).toBeUndefined();
    expect(await repository.findDelivery('whd_6')).toBeUndefined();
  });

  it('holds the cap when deliveries for one webhook are queued at once (two processes on PostgreSQL)', async () => {
    const one = createWebhooksRepository(state());
    const other = createWebhooksRepository(state());
    await one.insert(webhook('whk_1'));
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? one : other).enqueueDelivery(delivery(`whd_${i}`, 'whk_1'), 3),
      ),
    );
    expect(answers.filter((answer) => 'delivery' in answer)).toHaveLength(3);
    expect(answers.filter((answer) => 'full' in answer)).toHaveLength(5);
    expect(await one.listDeliveries({ webhookId: 'whk_1', limit: 10 })).toHaveLength(3);
  });

  it('writes an attempt’s outcome, and lists a webhook’s deliveries newest first by pages', async () => {
    const repository = createWebhooksRepository(state());
    await repository.insert(webhook('whk_1'));
    await repository.insert(webhook('whk_2'));
    for (const id of ['whd_1', 'whd_2', 'whd_3']) written(await repository.enqueueDelivery(delivery(id, 'whk_1'), 10));
    written(await repository.enqueueDelivery(delivery('whd_4', 'whk_2'), 10));

    const outcome = {
      attempts: 1,
      lastStatus: 503,
      lastCause: 'http_status',
      lastError: 'the receiver answered 503',
      lastDurationMs: 42,
      lastAttemptAt: at(1_000),
      nextAttemptAt: at(11_000),
    };
    const updated = await repository.updateDelivery('whd_2', outcome);
    expect(updated).toMatchObject({ id: 'whd_2', status: 'pending', ...outcome });
    expect(await repository.findDelivery('whd_2')).toEqual(updated);
    expect(await repository.updateDelivery('whd_none', { attempts: 1 })).toBeUndefined();

    const ids = (rows: DeliveryRow[]) => rows.map((row) => row.id);
    expect(ids(await repository.listDeliveries({ webhookId: 'whk_1', limit: 2 }))).toEqual(['whd_3', 'whd_2']);
    expect(ids(await repository.listDeliveries({ webhookId: 'whk_1', limit: 2, before: 'whd_2' }))).toEqual(['whd_1']);
    expect(ids(await repository.listDeliveries({ webhookId: 'whk_2', limit: 10 }))).toEqual(['whd_4']);
  });

  it('finds the pending deliveries due, soonest first, leaving out the webhooks given', async () => {
    const repository = createWebhooksRepository(state());
    for (const id of ['whk_1', 'whk_2', 'whk_3']) await repository.insert(webhook(id));
    const queue = async (id: string, webhookId: string, fields: Partial<NewDeliveryRow>) =>
      written(await repository.enqueueDelivery(delivery(id, webhookId, fields), 10));
    await queue('whd_1', 'whk_1', { nextAttemptAt: at(3_000) });
    await queue('whd_2', 'whk_2', { nextAttemptAt: at(1_000) });
    await queue('whd_3', 'whk_3', { nextAttemptAt: at(3_000) });
    await queue('whd_4', 'whk_1', { nextAttemptAt: at(9_000) });
    await queue('whd_5', 'whk_2', { nextAttemptAt: at(2_000) });
    await repository.updateDelivery('whd_5', { status: 'failed', nextAttemptAt: null, finishedAt: at(2_500) });

    const ids = (rows: DeliveryRow[]) => rows.map((row) => row.id);
    expect(ids(await repository.due({ now: at(3_000), exclude: [], limit: 10 }))).toEqual(['whd_2', 'whd_1', 'whd_3']);
    expect(ids(await repository.due({ now: at(3_000), exclude: [], limit: 2 }))).toEqual(['whd_2', 'whd_1']);
    expect(ids(await repository.due({ now: at(3_000), exclude: ['whk_2', 'whk_3'], limit: 10 }))).toEqual(['whd_1']);
    expect(ids(await repository.due({ now: at(999), exclude: [], limit: 10 }))).toEqual([]);
    expect(ids(await repository.due({ now: at(9_000), exclude: ['whk_2'], limit: 10 }))).toEqual([
      'whd_1',
      'whd_3',
      'whd_4',
    ]);
  });

  it('lets one taker claim a due delivery until a time; its end is written, or its claim given back, only while it holds', async () => {
    const repository = createWebhooksRepository(state());
    await repository.insert(webhook('whk_1'));
    written(await repository.enqueueDelivery(delivery('whd_1', 'whk_1', { nextAttemptAt: at(1_000) }), 10));

    // Not due yet; then due, taken once: a second taker that read it due too finds nothing.
    expect(await repository.claimDelivery('whd_1', { dueBy: at(999), until: at(40_000) })).toBeUndefined();
    const claimed = await repository.claimDelivery('whd_1', { dueBy: at(1_000), until: at(40_000) });
    expect(claimed).toMatchObject({ id: 'whd_1', status: 'pending', nextAttemptAt: at(40_000) });
    expect(await repository.claimDelivery('whd_1', { dueBy: at(2_000), until: at(41_000) })).toBeUndefined();
    expect(await repository.due({ now: at(39_999), exclude: [], limit: 10 })).toEqual([]);

    // Given back (a stop cut the attempt short): due again, untried; a stale claim gives nothing back.
    expect(await repository.releaseClaim('whd_1', at(39_000), at(3_000))).toBe(false);
    expect(await repository.releaseClaim('whd_1', at(40_000), at(3_000))).toBe(true);
    expect(await repository.findDelivery('whd_1')).toMatchObject({ nextAttemptAt: at(3_000), attempts: 0 });

    // A taker that died: its claim lapses, another takes it; the first one's late end is not written.
    await repository.claimDelivery('whd_1', { dueBy: at(3_000), until: at(40_000) });
    expect(await repository.claimDelivery('whd_1', { dueBy: at(40_000), until: at(80_000) })).toBeDefined();
    expect(await repository.finishAttempt('whd_1', at(40_000), { status: 'succeeded', attempts: 1 })).toBe(false);
    const end = { status: 'succeeded' as const, attempts: 1, nextAttemptAt: null, finishedAt: at(50_000) };
    expect(await repository.finishAttempt('whd_1', at(80_000), end)).toBe(true);
    expect(await repository.findDelivery('whd_1')).toMatchObject(end);
    // Finished: neither taken nor given back any more.
    expect(await repository.claimDelivery('whd_1', { dueBy: at(90_000), until: at(99_000) })).toBeUndefined();
    expect(await repository.releaseClaim('whd_1', at(80_000), at(90_000))).toBe(false);
  });

  it('prunes the deliveries finished before a date, and removes a webhook’s deliveries with it', async () => {
    const repository = createWebhooksRepository(state());
    await repository.insert(webhook('whk_1'));
    await repository.insert(webhook('whk_2'));
    for (const id of ['whd_1', 'whd_2', 'whd_3']) written(await repository.enqueueDelivery(delivery(id, 'whk_1'), 10));
    written(await repository.enqueueDelivery(delivery('whd_4', 'whk_2'), 10));
    await repository.updateDelivery('whd_1', { status: 'succeeded', finishedAt: at(1_000) });
    await repository.updateDelivery('whd_2', { status: 'failed', finishedAt: at(5_000) });

    expect(await repository.pruneFinished(at(1_000))).toBe(0);
    expect(await repository.pruneFinished(at(1_001))).toBe(1);
    expect(await repository.findDelivery('whd_1')).toBeUndefined();
    expect(await repository.findDelivery('whd_2')).toBeDefined();
    // Pending deliveries are never pruned, however old.
    expect(await repository.pruneFinished(at(1_000_000))).toBe(1);
    expect(await repository.findDelivery('whd_3')).toBeDefined();

    await repository.delete('whk_1');
    expect(await repository.findDelivery('whd_3')).toBeUndefined();
    expect(await repository.listDeliveries({ webhookId: 'whk_1', limit: 10 })).toEqual([]);
    expect(await repository.findDelivery('whd_4')).toBeDefined();
  });
});
