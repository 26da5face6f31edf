import { and, asc, count, desc, eq, lt, lte, notInArray } from 'drizzle-orm';
import { firstRow, forUpdate, rowsChanged, tableFor } from '../db/dialect.js';
import type { StateDatabase } from '../db/state-db.js';
import { webhookDeliveries as pgDeliveries, webhooks as pgWebhooks } from './webhooks.pg-table.js';
import {
  webhookDeliveries as sqliteDeliveries,
  webhooks as sqliteWebhooks,
  type DeliveryRow,
  type NewDeliveryRow,
  type NewWebhookRow,
  type WebhookRow,
} from './webhooks.table.js';

/** What queuing a delivery came to: the row written, or why none was (the webhook's backlog is full, or it is gone). */
export type Enqueued = { delivery: DeliveryRow } | { full: true; pending: number } | { gone: true };

/**
 * Webhooks and their deliveries on either dialect (issue 34, docs/design/cluster-state.md): one body on
 * drizzle's common query surface, every statement through the state database.
 */
export function createWebhooksRepository(state: StateDatabase) {
  const webhooks = tableFor(state.dialect, { sqlite: sqliteWebhooks, postgres: pgWebhooks });
  const deliveries = tableFor(state.dialect, { sqlite: sqliteDeliveries, postgres: pgDeliveries });

  // Read for every event the daemon emits (the dispatcher's subscription), so kept in memory on SQLite,
  // where this repository in this process is the webhooks' only writer: each write drops the copy, and a
  // read that overlapped a write (`generation` moved) is not kept. Not on PostgreSQL: another process of
  // the cluster may change the webhooks, so each event reads them (one small select).
  const keepsCopy = state.dialect === 'sqlite';
  let every: WebhookRow[] | null = null;
  let generation = 0;
  const dropCopy = () => {
    every = null;
    generation += 1;
  };
  const changing = async <T>(write: () => Promise<T>): Promise<T> => {
    dropCopy();
    try {
      return await write();
    } finally {
      dropCopy();
    }
  };

  /** The delivery `id` still pending under the claim that moved its due time to `claimedUntil`. */
  const claimHeld = (id: string, claimedUntil: Date) =>
    and(eq(deliveries.id, id), eq(deliveries.status, 'pending'), eq(deliveries.nextAttemptAt, claimedUntil));

  return {
    insert: (row: NewWebhookRow): Promise<WebhookRow> =>
      changing(() =>
        state.run((db) =>
          db
            .insert(webhooks)
            .values(row)
            .returning()
            .then((rows) => rows[0]!),
        ),
      ),
    update: (id: string, changes: Partial<NewWebhookRow>): Promise<WebhookRow | undefined> =>
      changing(() =>
        state.run((db) => db.update(webhooks).set(changes).where(eq(webhooks.id, id)).returning().then(firstRow)),
      ),
    find: (id: string): Promise<WebhookRow | undefined> =>
      state.run((db) => db.select().from(webhooks).where(eq(webhooks.id, id)).then(firstRow)),
    /** Its deliveries go with it. */
    delete: (id: string): Promise<boolean> =>
      changing(() => state.run(async (db) => rowsChanged(await db.delete(webhooks).where(eq(webhooks.id, id))) > 0)),
    /** Every webhook, oldest first (on SQLite the copy in memory: callers must not change it). */
    async all(): Promise<readonly WebhookRow[]> {
      if (every) return every;
      const seen = generation;
      const rows = await state.run((db) => db.select().from(webhooks).orderBy(asc(webhooks.id)));
      if (keepsCopy && seen === generation) every = rows;
      return rows;
    },
    /** Newest first; `before` is the previous page's last id. */
    list: ({ limit, before }: { limit: number; before?: string }): Promise<WebhookRow[]> =>
      state.run((db) =>
        db
          .select()
          .from(webhooks)
          .where(before ? lt(webhooks.id, before) : undefined)
          .orderBy(desc(webhooks.id))
          .limit(limit),
      ),

    /**
     * A pending delivery, unless its webhook already has `maxPending` waiting or is gone (removed since its
     * events were read). The count and the insert are one transaction, the webhook's row locked on
     * PostgreSQL: processes of a cluster queuing for one webhook at once take turns, so the cap holds.
     */
    enqueueDelivery: (row: NewDeliveryRow, maxPending: number): Promise<Enqueued> =>
      state.transaction(async (tx): Promise<Enqueued> => {
        const webhook = await forUpdate(
          state.dialect,
          tx.select({ id: webhooks.id }).from(webhooks).where(eq(webhooks.id, row.webhookId)),
        );
        if (webhook.length === 0) return { gone: true };
        const [waiting] = await tx
          .select({ n: count() })
          .from(deliveries)
          .where(and(eq(deliveries.webhookId, row.webhookId), eq(deliveries.status, 'pending')));
        const pending = waiting?.n ?? 0;
        if (pending >= maxPending) return { full: true, pending };
        const [delivery] = await tx.insert(deliveries).values(row).returning();
        return { delivery: delivery! };
      }),
    /**
     * Takes a pending delivery due by `dueBy` for one attempt, until `until` (its due time moves there): another
     * process, or a pump of this one, that read it due finds nothing to take. The delivery as taken; undefined
     * when it is no longer due (attempted, taken elsewhere, or gone with its webhook). A process that dies
     * mid-attempt leaves it due again at `until`.
     */
    claimDelivery: (id: string, { dueBy, until }: { dueBy: Date; until: Date }): Promise<DeliveryRow | undefined> =>
      state.run((db) =>
        db
          .update(deliveries)
          .set({ nextAttemptAt: until })
          .where(and(eq(deliveries.id, id), eq(deliveries.status, 'pending'), lte(deliveries.nextAttemptAt, dueBy)))
          .returning()
          .then(firstRow),
      ),
    /** Writes an attempt's end while its claim (`claimedUntil`) still holds; whether it did. */
    finishAttempt: async (id: string, claimedUntil: Date, changes: Partial<NewDeliveryRow>): Promise<boolean> =>
      rowsChanged(await state.run((db) => db.update(deliveries).set(changes).where(claimHeld(id, claimedUntil)))) > 0,
    /** Gives a claim back (an attempt cut short by a stop): the delivery is due again at `at`, untried. */
    releaseClaim: async (id: string, claimedUntil: Date, at: Date): Promise<boolean> =>
      rowsChanged(
        await state.run((db) => db.update(deliveries).set({ nextAttemptAt: at }).where(claimHeld(id, claimedUntil))),
      ) > 0,
    updateDelivery: (id: string, changes: Partial<NewDeliveryRow>): Promise<DeliveryRow | undefined> =>
      state.run((db) => db.update(deliveries).set(changes).where(eq(deliveries.id, id)).returning().then(firstRow)),
    findDelivery: (id: string): Promise<DeliveryRow | undefined> =>
      state.run((db) => db.select().from(deliveries).where(eq(deliveries.id, id)).then(firstRow)),
    /** Newest first; `before` is the previous page's last id. */
    listDeliveries: ({
      webhookId,
      limit,
      before,
    }: {
      webhookId: string;
      limit: number;
      before?: string;
    }): Promise<DeliveryRow[]> =>
      state.run((db) =>
        db
          .select()
          .from(deliveries)
          .where(and(eq(deliveries.webhookId, webhookId), before ? lt(deliveries.id, before) : undefined))
          .orderBy(desc(deliveries.id))
          .limit(limit),
      ),
    /** Pending deliveries whose attempt is due, soonest first, leaving out the webhooks given (those with one in flight). */
    due: ({ now, exclude, limit }: { now: Date; exclude: string[]; limit: number }): Promise<DeliveryRow[]> =>
      state.run((db) =>
        db
          .select()
          .from(deliveries)
          .where(
            and(
              eq(deliveries.status, 'pending'),
              lte(deliveries.nextAttemptAt, now),
              exclude.length > 0 ? notInArray(deliveries.webhookId, exclude) : undefined,
            ),
          )
          .orderBy(asc(deliveries.nextAttemptAt), asc(deliveries.id))
          .limit(limit),
      ),
    /** Retention: finished deliveries older than `before`; how many went. */
    pruneFinished: (before: Date): Promise<number> =>
      state.run(async (db) => rowsChanged(await db.delete(deliveries).where(lt(deliveries.finishedAt, before)))),
  };
}

export type WebhooksRepository = ReturnType<typeof createWebhooksRepository>;
