import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import type { CancelRequests } from './cancel-requests.js';
import type { StateDb } from '../db/state-db.js';
import { CANCELLED_MESSAGE, JobCancelled, type JobKind, type QueuedCancel } from './job-kind.js';
import type { JobEvents } from './job-events.js';
import type { ActiveJob } from './job-dispatch.js';
import { writtenAtOnce } from '../db/write-batch.js';
import type { JobLifecycleStore } from './job-lifecycle-store.js';
import { jobsProblems } from './jobs.errors.js';
import type { JobsRepository } from './jobs.repository.js';
import { finishedJobStates, type JobRow } from './jobs.table.js';

/**
 * Cancelling a job: a queued one is cancelled at once, by one statement that holds only while it is
 * still queued, with its kind's own row in the same transaction; a running one of a kind that can
 * stop halfway is asked to stop, and who asked is kept for its `job.cancelled` once it has
 * (job-runner.ts); any other running job, or a finished one, is a problem. A running job's row is
 * written by its run alone, never from beside it: its end is the run's to write.
 *
 * In a cluster (`requests`), the process asked may not be the one running the job: the request is kept and
 * announced to every process (cancel-requests.ts), and the one running it stops it; a queued job is cancelled
 * with its kind's row in the job store's transaction (`cancelQueuedWith`).
 */
export function createJobCancel({
  repository,
  store,
  requests,
  clock,
  kinds,
  active,
  cancelled,
}: {
  repository: JobsRepository;
  store: JobLifecycleStore;
  /** Cluster mode: requests across processes. */
  requests?: CancelRequests | undefined;
  clock: Clock;
  kinds: ReadonlyMap<string, JobKind>;
  active: ReadonlyMap<string, ActiveJob>;
  cancelled: JobEvents['cancelled'];
}) {
  /** Who asked to stop each running job still stopping, for its `job.cancelled` once it has. */
  const cancelledBy = new Map<string, Actor | undefined>();

  /** The job cancelled and its kind's row with it, if it was still queued; undefined otherwise. */
  const cancelQueuedHere = (id: string): JobRow | undefined =>
    repository.transaction(() => {
      // The job row first: a cancelled job stays cancelled whatever the kind's row says after it.
      const job = repository.cancelQueued(id, clock.now(), CANCELLED_MESSAGE);
      if (!job) return undefined;
      const kind = kinds.get(job.kind);
      const ended = kind && writtenAtOnce(kind.cancelQueued(job, CANCELLED_MESSAGE));
      if (!ended?.progress) return job;
      return repository.update(id, { progress: JSON.stringify(ended.progress) }) ?? job;
    });

  /** As `cancelQueuedHere`, in a cluster: the job row and its kind's in the job store's transaction. */
  async function cancelQueuedInCluster(id: string): Promise<JobRow | undefined> {
    const own = async (job: JobRow, tx: StateDb): Promise<QueuedCancel> =>
      kinds.get(job.kind)?.cancelQueued(job, CANCELLED_MESSAGE, tx);
    // (a cluster's store is the job store, which has it: the SQLite statements' store is one machine's)
    if (!store.cancelQueuedWith)
      throw new Error('a cluster’s job runner cancels through the job store (cancelQueuedWith)');
    return store.cancelQueuedWith(id, clock.now(), CANCELLED_MESSAGE, own);
  }

  function stop(id: string, running: ActiveJob, by: Actor | undefined): void {
    cancelledBy.set(id, by);
    running.controller.abort(new JobCancelled());
  }

  // Another process was asked to cancel a job: stopped here if it runs here.
  requests?.listen((id, by) => {
    const running = active.get(id);
    if (running?.kind.cancelsWhileRunning) stop(id, running, by);
  });

  return {
    cancelledBy,
    /** Stops a job this process runs, asked before it started it (a request kept while no process held it). */
    stop,

    /**
     * A queued job is cancelled at once; a running one is asked to stop (its kind records it
     * `cancelled` when it has), or 409 when its kind cannot stop halfway.
     */
    async cancel(id: string, by?: Actor): Promise<JobRow> {
      // Started in this process, its row may still read `queued` (a start held until its first commit): it is running.
      const running = active.get(id);
      const ended = running ? undefined : requests ? await cancelQueuedInCluster(id) : cancelQueuedHere(id);
      if (ended) {
        cancelled(ended, 'queued', by);
        return ended;
      }
      const job = requests ? await store.find(id) : repository.find(id);
      if (!job) throw jobsProblems.notFound.create(`there is no job ${id}`);
      if (finishedJobStates.includes(job.state))
        throw jobsProblems.finished.create(`job ${id} is already ${job.state}`, { state: job.state });
      // On one machine a job it does not run is not running anywhere.
      if (!kinds.get(job.kind)?.cancelsWhileRunning || (!running && !requests))
        throw jobsProblems.notCancellable.create(
          `job ${id} is a running ${job.kind}, which cannot be stopped halfway; wait until it has finished`,
          { state: 'running' },
        );
      if (running) stop(id, running, by);
      else await requests!.request(id, by);
      return job;
    },
  };
}
