import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { CANCELLED_MESSAGE, JobCancelled, type JobKind } from './job-kind.js';
import type { JobEvents } from './job-events.js';
import type { ActiveJob } from './job-dispatch.js';
import { jobsProblems } from './jobs.errors.js';
import type { JobsRepository } from './jobs.repository.js';
import { finishedJobStates, type JobRow } from './jobs.table.js';

/**
 * Cancelling a job: a queued one is cancelled at once, by one statement that holds only while it is
 * still queued, with its kind's own row in the same transaction; a running one of a kind that can
 * stop halfway is asked to stop, and who asked is kept for its `job.cancelled` once it has
 * (job-runner.ts); any other running job, or a finished one, is a problem. A running job's row is
 * written by its run alone, never from beside it: its end is the run's to write.
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

  /** The job cancelled and its kind's row with it, if it was still queued; undefined otherwise. */
  const cancelQueued = (id: string): JobRow | undefined =>
    repository.transaction(() => {
      // The job row first: a cancelled job stays cancelled whatever the kind's row says after it.
      const job = repository.cancelQueued(id, clock.now(), CANCELLED_MESSAGE);
      if (!job) return undefined;
      const ended = kinds.get(job.kind)?.cancelQueued(job, CANCELLED_MESSAGE);
      if (!ended?.progress) return job;
      return repository.update(id, { progress: JSON.stringify(ended.progress) }) ?? job;
    });

  return {
    cancelledBy,

    /**
     * A queued job is cancelled at once; a running one is asked to stop (its kind records it
     * `cancelled` when it has), or 409 when its kind cannot stop halfway.
     */
    cancel(id: string, by?: Actor): JobRow {
      // Started in this process, its row may still read `queued` (a start held until its first commit): it is running.
      const running = active.get(id);
      const ended = running ? undefined : cancelQueued(id);
      if (ended) {
        cancelled(ended, 'queued', by);
        return ended;
      }
      const job = repository.find(id);
      if (!job) throw jobsProblems.notFound.create(`there is no job ${id}`);
      if (finishedJobStates.includes(job.state))
        throw jobsProblems.finished.create(`job ${id} is already ${job.state}`, { state: job.state });
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
