import { z } from '@hono/zod-openapi';
import type { Logger } from 'pino';
import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import type { Events, PublishedEvent } from '../shared/event-bus.js';
import { createId } from '../shared/ids.js';
import { updatePoliciesProblems } from './update-policies.errors.js';
import type { UpdateHold, UpdateHoldsRepository } from './update-holds.repository.js';

/** What a safe update's rollback events carry that a hold needs (src/shared/events.ts). */
const RollbackFields = z.object({
  siteId: z.string().min(1),
  safeUpdateId: z.string().nullish(),
  type: z.enum(['plugin', 'theme', 'core']),
  slug: z.string().min(1),
  toVersion: z.string().min(1),
  reason: z.string().nullish(),
  message: z.string().nullish(),
});

const ROLLBACK_EVENTS: Record<string, UpdateHold['outcome']> = {
  'update.rolled-back': 'rolled-back',
  'update.rollback-failed': 'rollback-failed',
};

/**
 * Holds: a version a safe update rolled back on a site is not applied there again by a policy
 * until a user releases it. Fed by the event bus (the composition subscribes `onEvent`), so this
 * feature needs nothing of safe updates, which sit above it.
 */
export function createUpdateHolds({
  repository,
  clock,
  events,
  logger,
}: {
  repository: UpdateHoldsRepository;
  clock: Clock;
  events: Events;
  logger: Logger;
}) {
  async function get(id: string): Promise<UpdateHold> {
    const hold = await repository.find(id);
    if (!hold) throw updatePoliciesProblems.holdNotFound.create(`no update hold has the id ${id}`);
    return hold;
  }

  return {
    /**
     * A rollback event holds the version it rolled back from (`toVersion`); other events pass by. Never
     * rejects: the bus does not await it, so a write that fails is logged here.
     */
    async onEvent(event: PublishedEvent): Promise<void> {
      const outcome = ROLLBACK_EVENTS[event.event];
      if (!outcome) return;
      const fields = RollbackFields.safeParse(event.fields);
      if (!fields.success) return;
      const { toVersion, safeUpdateId, reason, message, ...item } = fields.data;
      const now = clock.now();
      try {
        await repository.hold({
          id: createId('hold', now),
          ...item,
          version: toVersion,
          outcome,
          reason: reason ?? null,
          message: message ?? null,
          safeUpdateId: safeUpdateId ?? null,
          heldAt: now,
        });
      } catch (error) {
        // The site was removed in between (its holds went with it), or the database is closing.
        logger.warn({ err: error, siteId: item.siteId, slug: item.slug }, 'holding a rolled-back version failed');
      }
    },

    get,

    /** The active holds of these sites, by site: what the evaluation skips. */
    activeFor: (siteIds: readonly string[]) => repository.activeFor(siteIds),

    list: (filter: Parameters<UpdateHoldsRepository['list']>[0]) => repository.list(filter),

    /**
     * Lets policies apply the version again; records who released it. One conditional write: of two
     * releases at once, one releases it and the other is told it was released already.
     */
    async release(id: string, by: Actor): Promise<UpdateHold> {
      const released = await repository.release(id, clock.now(), by);
      if (!released) {
        const hold = await get(id);
        throw updatePoliciesProblems.holdReleased.create(
          `the hold on ${hold.type} ${hold.slug} ${hold.version} was released already`,
        );
      }
      events.emit('update_policy.hold_released', {
        holdId: id,
        siteId: released.siteId,
        type: released.type,
        slug: released.slug,
        version: released.version,
        releasedByKind: by.kind,
        releasedById: by.id,
      });
      return released;
    },
  };
}
