import { z } from 'zod';
import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import type { RestorePoints } from './restore-points.js';
import { updateHistoryProblems } from './update-history.errors.js';
import type { UpdateHistoryRepository } from './update-history.repository.js';
import type { UpdateHistoryRow } from './update-history.table.js';
import { messageOf, reasonOf, requester, type UpdateRecorder } from './update-recorder.js';

const RestorePointJson = z.object({ id: z.string().min(1), target: z.string().min(1) });

/** The entry's restore point (`{ id, target }`), null when it has none (or not one we can read). */
export function restorePointOf(entry: Pick<UpdateHistoryRow, 'restorePoint'>): z.infer<typeof RestorePointJson> | null {
  if (!entry.restorePoint) return null;
  try {
    const parsed = RestorePointJson.safeParse(JSON.parse(entry.restorePoint));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Why a plain update rolled back from its history entry was (the `update.rolled-back` event's `reason`). */
const ROLLED_BACK_ON_REQUEST = 'rolled-back-on-request';

/**
 * Rolling back a plain plugin, theme or core update from its history entry: its restore point put
 * back through the site's standalone rollback path (which works when WordPress fatals on every
 * request; core: `wp-admin`, `wp-includes` and the root PHP files, file by file), in the site's
 * turn, its inventory read again after.
 * The rollback is an attempt of its own in the history (from → to reversed, who asked,
 * `rollbackOf` the entry); once one did not fail, the entry is rolled back.
 */
export function createHistoryRollback({
  history,
  recorder,
  restorePoints,
  events,
  clock,
}: {
  history: Pick<UpdateHistoryRepository, 'find' | 'rollbackOf' | 'finish'>;
  recorder: UpdateRecorder;
  /** None: no entry has a restore point to roll back to. */
  restorePoints: Pick<RestorePoints, 'rollBack'> | undefined;
  events: Events;
  clock: Clock;
}) {
  const alreadyRolledBack = (entryId: string, rollback: UpdateHistoryRow) =>
    updateHistoryProblems.alreadyRolledBack.create(`the update ${entryId} was rolled back by ${rollback.id}`, {
      rollbackId: rollback.id,
    });
  const entryNotFound = (siteId: string, entryId: string) =>
    updateHistoryProblems.entryNotFound.create(`site ${siteId} has no update history entry ${entryId}`);

  /** The entry's restore point, or the 404 / 409 that says why it cannot be rolled back now. */
  async function rollbackable(siteId: string, entryId: string) {
    const entry = await history.find(siteId, entryId);
    if (!entry) throw entryNotFound(siteId, entryId);
    const point = restorePointOf(entry);
    if (!point || !restorePoints || entry.type === 'translations')
      throw updateHistoryProblems.noRestorePoint.create(
        entry.safeUpdateId
          ? `the update ${entryId} was a safe update, which rolls back on its own (its report: ${entry.safeUpdateId})`
          : `the update ${entryId} took no restore point`,
      );
    if (entry.result === 'running')
      throw updateHistoryProblems.stillRunning.create(`the update ${entryId} is still running`);
    const done = await history.rollbackOf(entry.id);
    if (done) throw alreadyRolledBack(entryId, done);
    return { entry, point, rollBack: restorePoints.rollBack };
  }

  return {
    /** The entry, when it can be rolled back now; else the problem that says why not (404, 409). */
    rollbackable: async (siteId: string, entryId: string): Promise<UpdateHistoryRow> =>
      (await rollbackable(siteId, entryId)).entry,

    /** Puts the entry's restore point back; the entry and the rollback's own history row, once done. */
    async rollBack(
      siteId: string,
      entryId: string,
      requestedBy: Actor | undefined,
    ): Promise<{ entry: UpdateHistoryRow; rollback: UpdateHistoryRow }> {
      const { entry, point, rollBack } = await rollbackable(siteId, entryId);
      // Started only while no other rollback of the entry runs or is done, in one transaction: of two requests at
      // once (or two processes'), one starts it and the other answers 409.
      const starting = await recorder.startRollback({
        siteId,
        type: entry.type,
        slug: entry.slug,
        fromVersion: entry.toVersion,
        toVersion: entry.fromVersion,
        trigger: requester(requestedBy),
        rollbackOf: entry.id,
      });
      if (!starting) throw entryNotFound(siteId, entryId);
      if ('rolledBackBy' in starting) throw alreadyRolledBack(entryId, starting.rolledBackBy);
      const { started } = starting;
      const startedMs = Date.now();
      try {
        await rollBack(siteId, point);
      } catch (error) {
        await history.finish(started.id, {
          result: 'failed',
          reason: reasonOf(error),
          error: messageOf(error),
          finishedAt: clock.now(),
        });
        throw error;
      }
      await history.finish(started.id, { result: 'succeeded', finishedAt: clock.now() });
      // As a safe update's rollback: update policies hold the version rolled back from (core by the slug a safe core update names).
      events.emit('update.rolled-back', {
        siteId,
        safeUpdateId: null,
        type: entry.type,
        slug: entry.slug ?? (entry.type === 'core' ? 'wordpress' : null),
        fromVersion: entry.fromVersion,
        toVersion: entry.toVersion,
        reason: ROLLED_BACK_ON_REQUEST,
        message: `update ${entry.id} rolled back from its restore point ${point.id} (history ${started.id})`,
        durationMs: Date.now() - startedMs,
      });
      return { entry, rollback: (await history.find(siteId, started.id))! };
    },
  };
}
