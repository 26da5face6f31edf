import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { CANCELLED_MESSAGE, JobCancelled, type JobKind } from './job-kind.js';
import type { JobEvents } from './job-events.js';
import type { ActiveJob } from './job-pools.js';
import { jobsProblems } from './jobs.errors.js';
import type { JobsRepository } from './jobs.repository.js';
import { finishedJobStates, type JobRow } from './jobs.table.js';

/**
 * Cancelling a job: a queued one is cancelled at once (its row first, then its kind's own row,
 * in one transaction); a running one of a kind that can stop halfway is asked to stop, and who
 * asked is kept for its `job.cancelled` once it has (job-runner.ts); any other running job, or a
 * finished one, is a problem.
 */
export function createJobCancel({
  repository,
  clock,
  kinds,
  active,
  cancelled,
}: {
  repository: JobsRepository;
  clock: Clock;
  kinds: ReadonlyMap<string, JobKind>;
  active: ReadonlyMap<string, ActiveJob>;
  cancelled: JobEvents['cancelled'];
}) {
  /** Who asked to stop each running job still stopping, for its `job.cancelled` once it has. */
  const cancelledBy = new Map<string, Actor | undefined>();

  return {
    cancelledBy,

    /**
     * A queued job is cancelled at once; a running one is asked to stop (its kind records it
     * `cancelled` when it has), or 409 when its kind cannot stop halfway.
     */
    cancel(id: string, by?: Actor): JobRow {
      const job = repository.find(id);
      if (!job) throw jobsProblems.notFound.create(`there is no job ${id}`);
      if (finishedJobStates.includes(job.state))
        throw jobsProblems.finished.create(`job ${id} is already ${job.state}`, { state: job.state });
      const running = active.get(id);
      if (job.state === 'queued' && !running) {
        // The job row first: a cancelled job stays cancelled whatever the kind's row says after it.
        repository.transaction(() => {
          repository.markCancelled(id, clock.now(), CANCELLED_MESSAGE);
          const ended = kinds.get(job.kind)?.cancelQueued(job, CANCELLED_MESSAGE);
          if (ended?.progress) repository.write(id, { progress: JSON.stringify(ended.progress) });
        });
        cancelled(job, 'queued', by);
        return repository.find(id)!;
      }
      // Started in this process, its row may still read `queued` (a start held until its first commit): it is running.
      if (!running?.kind.cancelsWhileRunning)
        throw jobsProblems.notCancellable.create(
          `job ${id} is a running ${job.kind}, which cannot be stopped halfway; wait until it has finished`,
          { state: 'running' },
        );
      cancelledBy.set(id, by);
      running.controller.abort(new JobCancelled());
      return job;
    },
  };
}
