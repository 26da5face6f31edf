import type { JobKind } from './job-kind.js';
import type { JobEvents } from './job-events.js';
import type { createJobRowWriter } from './job-rows.js';
import type { JobsRepository } from './jobs.repository.js';

/**
 * The job runner's recovery at start, for the jobs the last process left unfinished: each kind
 * decides for its running ones (they fail as `interrupted`, or are queued again) and its queued
 * ones (queued again, ended, or left to their parent); then each kind may retry what was
 * interrupted. Every decision is logged as `job.interrupted`.
 */
export function createJobRecovery({
  repository,
  kindOf,
  finish,
  announce,
  interrupted,
  schedule,
}: {
  repository: JobsRepository;
  kindOf: (name: string) => JobKind;
  finish: ReturnType<typeof createJobRowWriter>['finish'];
  announce: JobEvents['announce'];
  interrupted: JobEvents['interrupted'];
  /** Runs a queued job in its pool (job-pools.ts). */
  schedule: (kindName: string, id: string, siteId: string | null) => void;
}) {
  return {
    /**
     * At start, for the jobs of these kinds the last process left unfinished: running ones (it
     * was killed) fail as `interrupted`, queued ones are queued again, each as its kind decides;
     * then each kind may retry what was interrupted.
     */
    async recover(kindNames: readonly string[]): Promise<{ requeued: number; interrupted: number }> {
      const counts = { requeued: 0, interrupted: 0 };
      for (const name of kindNames)
        for (const job of repository.unfinished(name, 'running')) {
          const kind = kindOf(name);
          const settlement = kind.recover.running(job);
          // Queued again: the loop over queued jobs below runs it (and logs it `requeued`).
          if ('requeue' in settlement) {
            repository.write(job.id, { state: 'queued', message: settlement.message ?? null }, 'running');
            continue;
          }
          await finish(job.id, settlement.outcome ?? { state: 'failed', reason: 'interrupted' });
          const interrupted = settlement.interrupted ?? true;
          announce(job, { ...settlement, interrupted });
          if (interrupted) counts.interrupted++;
        }
      for (const name of kindNames)
        for (const job of repository.unfinished(name, 'queued')) {
          const kind = kindOf(name);
          const decision = kind.recover.queued?.(job) ?? 'requeue';
          if (decision === 'leave') continue;
          if (decision !== 'requeue') {
            await finish(job.id, decision.outcome ?? { state: 'failed', reason: 'interrupted' });
            announce(job, decision);
            continue;
          }
          schedule(name, job.id, job.siteId);
          interrupted(job, 'requeued');
          counts.requeued++;
        }
      for (const name of kindNames)
        for (const { job, fields } of (await kindOf(name).recover.afterwards?.()) ?? [])
          interrupted({ ...job, kind: name }, 'retried', fields);
      return counts;
    },
  };
}
