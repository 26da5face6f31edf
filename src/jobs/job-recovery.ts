import type { JobDispatch } from './job-dispatch.js';
import type { JobKind } from './job-kind.js';
import type { JobEvents } from './job-events.js';
import type { JobLifecycleStore } from './job-lifecycle-store.js';
import type { createJobRowWriter } from './job-rows.js';
import type { JobRow } from './jobs.table.js';

/**
 * The job runner's recovery at start, for the jobs the last process left unfinished: each kind
 * decides for its running ones (they fail as `interrupted`, or are queued again) and its queued
 * ones (queued again, ended, or left to their parent); then each kind may retry what was
 * interrupted. Every decision is logged as `job.interrupted`. In a cluster only the running ones no process holds
 * are this start's to settle (job-dispatch.ts `unheld`): the queue hands a dead worker's job to another after its
 * expiry, and the runner settles it then, job by job (`settleLeftRunning`).
 */
export function createJobRecovery({
  store,
  dispatch,
  kindOf,
  finish,
  announce,
  interrupted,
}: {
  store: JobLifecycleStore;
  /** Where a queued job is handed on, which running rows no process holds, and whether this process is the only one. */
  dispatch: Pick<JobDispatch, 'schedule' | 'unheld' | 'oneProcess'>;
  kindOf: (name: string) => JobKind;
  finish: ReturnType<typeof createJobRowWriter>['finish'];
  announce: JobEvents['announce'];
  interrupted: JobEvents['interrupted'];
}) {
  /**
   * A job a dead process left `running`, settled as its kind says: queued again while it still is running
   * (`requeued`: the caller runs it), or ended and logged (`interrupted` unless its kind found it had in fact ended).
   */
  async function settleLeftRunning(job: JobRow): Promise<{ requeued: boolean; interrupted: boolean }> {
    const settlement = await kindOf(job.kind).recover.running(job);
    if ('requeue' in settlement)
      return { requeued: await store.requeue(job.id, settlement.message ?? null), interrupted: false };
    await finish(job.id, settlement.outcome ?? { state: 'failed', reason: 'interrupted' });
    const interrupted = settlement.interrupted ?? true;
    announce(job, { ...settlement, interrupted });
    return { requeued: false, interrupted };
  }

  /** Each kind's retries of what was interrupted (`recover.afterwards`), logged `retried`. */
  async function retryInterrupted(kindNames: readonly string[]): Promise<void> {
    for (const name of kindNames)
      for (const { job, fields } of (await kindOf(name).recover.afterwards?.()) ?? [])
        interrupted({ ...job, kind: name }, 'retried', fields);
  }

  return {
    settleLeftRunning,
    retryInterrupted,

    /**
     * At start, for the jobs of these kinds the last process left unfinished: running ones (it
     * was killed) fail as `interrupted`, queued ones are queued again, each as its kind decides;
     * then each kind may retry what was interrupted.
     */
    async recover(
      kindNames: readonly string[],
      { retries = dispatch.oneProcess }: { retries?: boolean } = {},
    ): Promise<{ requeued: number; interrupted: number }> {
      const counts = { requeued: 0, interrupted: 0 };
      // Queued again ones are run (and logged `requeued`) by the loop over queued jobs below.
      for (const name of kindNames)
        for (const left of await dispatch.unheld(await store.unfinished(name, 'running'))) {
          // Read again: in a cluster, it may have ended since (its end written by the process that ran it).
          const job = dispatch.oneProcess ? left : await store.find(left.id);
          if (job?.state === 'running' && (await settleLeftRunning(job)).interrupted) counts.interrupted++;
        }
      for (const name of kindNames)
        for (const job of await store.unfinished(name, 'queued')) {
          const kind = kindOf(name);
          const decision = (await kind.recover.queued?.(job)) ?? 'requeue';
          if (decision === 'leave') continue;
          if (decision !== 'requeue') {
            await finish(job.id, decision.outcome ?? { state: 'failed', reason: 'interrupted' });
            announce(job, decision);
            continue;
          }
          // In a cluster, most are in the queue already: only one sent anew was left behind.
          if (!(await dispatch.schedule(name, job.id, job.siteId, job.attempts))) continue;
          interrupted(job, 'requeued');
          counts.requeued++;
        }
      if (retries) await retryInterrupted(kindNames);
      return counts;
    },
  };
}
