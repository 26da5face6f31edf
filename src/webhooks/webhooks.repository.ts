import { and, asc, count, desc, eq, lt, lte, notInArray } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import {
  webhookDeliveries,
  webhooks,
  type DeliveryRow,
  type NewDeliveryRow,
  type NewWebhookRow,
  type WebhookRow,
} from './webhooks.table.js';

export function createWebhooksRepository({ db }: { db: Db }) {
  // Read for every event the daemon emits (the dispatcher's subscription), so kept in memory; this
  // repository is the webhooks' only writer, and each of its writes drops the copy.
  let every: WebhookRow[] | null = null;
  const changed = <T>(result: T): T => {
    every = null;
    return result;
  };
  return {
    insert: (row: NewWebhookRow): WebhookRow => changed(db.insert(webhooks).values(row).returning().get()),
    update: (id: string, changes: Partial<NewWebhookRow>): WebhookRow | undefined =>
      changed(db.update(webhooks).set(changes).where(eq(webhooks.id, id)).returning().get()),
    find: (id: string): WebhookRow | undefined => db.select().from(webhooks).where(eq(webhooks.id, id)).get(),
    /** Its deliveries go with it. */
    delete: (id: string): boolean => changed(db.delete(webhooks).where(eq(webhooks.id, id)).run().changes > 0),
    /** Every webhook, oldest first (the copy in memory: callers must not change it). */
    all: (): readonly WebhookRow[] => (every ??= db.select().from(webhooks).orderBy(asc(webhooks.id)).all()),
    /** Newest first; `before` is the previous page's last id. */
    list: ({ limit, before }: { limit: number; before?: string }): WebhookRow[] =>
      db
        .select()
        .from(webhooks)
        .where(before ? lt(webhooks.id, before) : undefined)
        .orderBy(desc(webhooks.id))
        .limit(limit)
        .all(),

    insertDelivery: (row: NewDeliveryRow): DeliveryRow => db.insert(webhookDeliveries).values(row).returning().get(),
    updateDelivery: (id: string, changes: Partial<NewDeliveryRow>): DeliveryRow | undefined =>
      db.update(webhookDeliveries).set(changes).where(eq(webhookDeliveries.id, id)).returning().get(),
    findDelivery: (id: string): DeliveryRow | undefined =>
      db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get(),
    /** Newest first; `before` is the previous page's last id. */
    listDeliveries: ({
      webhookId,
      limit,
      before,
    }: {
      webhookId: string;
      limit: number;
      before?: string;
    }): DeliveryRow[] =>
      db
        .select()
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.webhookId, webhookId), before ? lt(webhookDeliveries.id, before) : undefined))
        .orderBy(desc(webhookDeliveries.id))
        .limit(limit)
        .all(),
    pendingCount: (webhookId: string): number =>
      db
        .select({ n: count() })
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.webhookId, webhookId), eq(webhookDeliveries.status, 'pending')))
        .get()?.n ?? 0,
    /** Pending deliveries whose attempt is due, soonest first, leaving out the webhooks given (those with one in flight). */
    due: ({ now, exclude, limit }: { now: Date; exclude: string[]; limit: number }): DeliveryRow[] =>
      db
        .select()
        .from(webhookDeliveries)
        .where(
          and(
            eq(webhookDeliveries.status, 'pending'),
            lte(webhookDeliveries.nextAttemptAt, now),
            exclude.length > 0 ? notInArray(webhookDeliveries.webhookId, exclude) : undefined,
          ),
        )
        .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.id))
        .limit(limit)
        .all(),
    /** Retention: finished deliveries older than `before`. */
    pruneFinished: (before: Date): number =>
      db.delete(webhookDeliveries).where(lt(webhookDeliveries.finishedAt, before)).run().changes,
  };
}

export type WebhooksRepository = ReturnType<typeof createWebhooksRepository>;
