import { updateProblems } from '../inventory/index.js';
import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { isAppError, isProblem } from '../shared/errors.js';
import { createId } from '../shared/ids.js';
import type { WriteBatch } from '../db/write-batch.js';
import type { AttemptEnd, StartedRow, UpdateHistoryRepository } from './update-history.repository.js';
import type { TriggerKind, UpdateHistoryRow, UpdateItemType } from './update-history.table.js';

export interface UpdateAttempt {
  siteId: string;
  type: UpdateItemType;
  slug: string | null;
  fromVersion: string | null;
  toVersion: string | null;
  trigger: { kind: TriggerKind; id: string | null };
  jobId?: string | null;
  /** The safe update's report, when the attempt is one. */
  safeUpdateId?: string | null;
  /** A plain update's restore point (JSON `{ id, target }`); on a rollback, the attempt it rolls back. */
  restorePoint?: string | null;
  rollbackOf?: string | null;
}

/** Who asked for a single-site update: the API token or the dashboard user the request acts as (see shared/actor). */
export const requester = (actor: Actor | undefined): UpdateAttempt['trigger'] => {
  if (!actor) return { kind: 'request', id: null };
  return { kind: actor.kind === 'user' ? 'user' : 'request', id: actor.id };
};

/** The site had nothing to do (no update, or not the version asked for): the attempt is skipped, not failed. */
export const isNothingToUpdate = (error: unknown): boolean =>
  isProblem(error, updateProblems.noUpdate, updateProblems.versionNotOffered);

export const reasonOf = (error: unknown): string => (isAppError(error) ? error.problem.name : 'internal-error');
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Where a recorder writes an attempt's start and its end. */
interface AttemptWrites<Started, Ended> {
  start(row: StartedRow): Started;
  end(id: string, end: AttemptEnd): Ended;
}

/**
 * Writes the update history: a row when an attempt starts, finished when it ends, whoever made it.
 * `batched(batch)` records one site update's attempts through its write batch: a start commits
 * with what the batch holds (before the request), an end waits for the next commit (the repository's
 * `within`: on the batch's transaction, or at once in SQLite's); the recorder without one awaits the
 * repository's writes.
 */
export function createUpdateRecorder({
  repository,
  clock,
}: {
  repository: Pick<UpdateHistoryRepository, 'insert' | 'finish' | 'startRollback' | 'within'>;
  clock: Clock;
}) {
  const rowOf = (attempt: UpdateAttempt): StartedRow => ({
    id: createId('upd', clock.now()),
    siteId: attempt.siteId,
    type: attempt.type,
    slug: attempt.slug,
    fromVersion: attempt.fromVersion,
    toVersion: attempt.toVersion,
    startedAt: clock.now(),
    triggerKind: attempt.trigger.kind,
    triggerId: attempt.trigger.id,
    jobId: attempt.jobId ?? null,
    safeUpdateId: attempt.safeUpdateId ?? null,
    restorePoint: attempt.restorePoint ?? null,
    rollbackOf: attempt.rollbackOf ?? null,
    result: 'running',
  });

  function recorderOf<Started extends UpdateHistoryRow | Promise<UpdateHistoryRow>, Ended extends void | Promise<void>>(
    writes: AttemptWrites<Started, Ended>,
  ) {
    /** The attempt's row, written as it starts (in a batch, committed with what it holds: before the request it records). */
    const start = (attempt: UpdateAttempt): Started => writes.start(rowOf(attempt));

    async function trackEnding<T>(
      attempt: UpdateAttempt,
      work: (row: UpdateHistoryRow) => Promise<T>,
      endOf: (result: T) => Omit<AttemptEnd, 'finishedAt'>,
    ): Promise<T> {
      const row = await start(attempt);
      try {
        const result = await work(row);
        await writes.end(row.id, { ...endOf(result), finishedAt: clock.now() });
        return result;
      } catch (error) {
        if (isProblem(error, updateProblems.appliedSiteUnhealthy)) {
          // Applied (the new version is on disk), the site unhealthy after it: its entry can be rolled back.
          await writes.end(row.id, {
            result: 'succeeded',
            toVersion: typeof error.extensions.version === 'string' ? error.extensions.version : attempt.toVersion,
            reason: reasonOf(error),
            error: messageOf(error),
            finishedAt: clock.now(),
          });
          error.extensions.updateId = row.id;
          throw error;
        }
        const linked = isAppError(error) ? error.extensions.safeUpdateId : undefined;
        await writes.end(row.id, {
          result: isNothingToUpdate(error) ? 'skipped' : 'failed',
          reason: reasonOf(error),
          error: messageOf(error),
          safeUpdateId: typeof linked === 'string' ? linked : null,
          finishedAt: clock.now(),
        });
        throw error;
      }
    }

    return {
      /** An attempt that ends elsewhere (a queued safe update: `finishSafeUpdate` when its job decides). */
      start,

      /**
       * Runs `work` (given the attempt's row, as started) as one recorded attempt; `versionOf` reads
       * the version the site reports from its answer. Rethrows.
       */
      track<T>(
        attempt: UpdateAttempt,
        work: (row: UpdateHistoryRow) => Promise<T>,
        versionOf: (result: T) => string | null,
        /** For an attempt run as a safe update: its report's id (a failure names it in its problem's `safeUpdateId`). */
        safeUpdateIdOf?: (result: T) => string,
      ): Promise<T> {
        return trackEnding(attempt, work, (result) => ({
          result: 'succeeded',
          toVersion: versionOf(result) ?? attempt.toVersion,
          safeUpdateId: safeUpdateIdOf?.(result) ?? null,
        }));
      },

      /** `track` for work whose answer says how the attempt ended (a site that refused it as it began ends it skipped). */
      trackEnding,

      /**
       * A plain update that ended `succeeded` after which the site was found failing (its front page
       * answered 5xx or a fatal error): the entry stays succeeded, with reason
       * `update-applied-site-unhealthy` and `message`, as one whose read-back failed; with the batch's next commit.
       */
      appliedButUnhealthy: (rowId: string, message: string): Ended =>
        writes.end(rowId, {
          result: 'succeeded',
          reason: updateProblems.appliedSiteUnhealthy.name,
          error: message,
          finishedAt: clock.now(),
        }),
    };
  }

  return {
    ...recorderOf({ start: (row) => repository.insert(row), end: (id, end) => repository.finish(id, end) }),
    /**
     * A rollback of the attempt `attempt.rollbackOf` as it starts, unless one of it is running or done
     * (`rolledBackBy`); undefined when the attempt is gone (repository `startRollback`).
     */
    startRollback: (attempt: UpdateAttempt & { rollbackOf: string }) =>
      repository.startRollback({ ...rowOf(attempt), rollbackOf: attempt.rollbackOf }),
    batched: (batch: WriteBatch) =>
      recorderOf({
        start: async (row) => (await batch.commit((tx) => repository.within.insert(row, tx)))!,
        end: (id, end) => batch.later((tx) => repository.within.finish(id, end, tx)),
      }),
  };
}

export type UpdateRecorder = ReturnType<typeof createUpdateRecorder>;
/** A recorder of one site update's attempts, through its write batch. */
export type BatchedRecorder = ReturnType<UpdateRecorder['batched']>;
