/**
 * The job runner's writes of job rows (job-runner.ts runs the lifecycle; this file writes it): a
 * job written queued (alone, with its kind's own row, or a parent with its children), started,
 * its progress, its end; a parent's child it leaves unstarted, a finished job's outcome revised.
 * No feature writes a job row (docs/jobs.md, "Who writes a job row").
 */
import type { Logger } from 'pino';
import type { StateDb } from '../db/state-db.js';
import {
  createAsyncWriteBatch,
  createWriteBatch,
  writtenAtOnce,
  type HeldWrite,
  type WriteBatch,
} from '../db/write-batch.js';
import type { Clock } from '../shared/clock.js';
import type {
  Applying,
  EndedJob,
  JobContext,
  JobOutcome,
  JobRevision,
  NewChildJob,
  NewJob,
  Settlement,
} from './job-kind.js';
import type { JobLifecycleStore, JobReport, OwnRow } from './job-lifecycle-store.js';
import type { JobsRepository } from './jobs.repository.js';
import type { JobRow, NewJobRow } from './jobs.table.js';

/** A new job's row as the repository stores it, `queued`. */
const newJobRow = (job: NewJob) => ({
  id: job.id,
  kind: job.kind,
  siteId: job.siteId,
  state: 'queued' as const,
  params: JSON.stringify(job.params ?? {}),
  progress: JSON.stringify(job.progress ?? {}),
  createdAt: job.createdAt,
});

/** A job written `running` (or, held, about to be with its kind's first commit), and the write batch it runs with. */
interface Started {
  job: JobRow;
  batch: WriteBatch;
}

/** An outcome's columns as stored (`progress` left out: as it is). */
const endOf = (outcome: JobOutcome, now: () => Date) => ({
  state: outcome.state,
  reason: outcome.reason ?? null,
  message: outcome.message ?? null,
  progress: outcome.progress === undefined ? undefined : JSON.stringify(outcome.progress),
  finishedAt: outcome.finishedAt ?? now(),
});

/**
 * `store`: the lifecycle's writes (a job started, what it reports, its end), on either dialect. The rest — a kind's
 * write batch and what it holds for it, a job written with its kind's own row, a parent with its children, the
 * revisions, and a kind's hooks — go through the store's own transactions where it has them (`transactional`: the
 * job store), else through `repository`, the daemon's SQLite statements, in synchronous transactions
 * (docs/design/cluster-state.md, "The runner's move").
 */
export function createJobRowWriter({
  repository,
  store,
  clock,
  logger,
}: {
  repository: JobsRepository;
  store: JobLifecycleStore;
  clock: Clock;
  logger: Logger;
}) {
  const now = () => clock.now();
  const { transactional } = store;
  /** A write held in a kind's batch: on the batch's `tx` where the store has transactions, else at once on SQLite. */
  const heldWrite =
    (onTx: (tx: StateDb) => Promise<unknown>, atOnce: () => unknown): HeldWrite =>
    (tx) =>
      tx ? onTx(tx) : atOnce();

  /**
   * Writes how a job ended; a job already ended (cancelled while queued) or removed with its site stays as it is
   * (`replacing`: ended by the end its kind held, which this one replaces).
   */
  async function finish(id: string, outcome: JobOutcome, replacing = false): Promise<void> {
    await store.finish(id, endOf(outcome, now), { replacing });
  }

  /**
   * A running job's reports (`context.progress`, `params`, `note`), which kinds do not await: written at once where
   * the store can, else one after the other on this job's chain, whose end the job's end waits for. A report that
   * fails is logged: the job goes on, and its end is written all the same.
   */
  function reporter(id: string): { report: (changes: JobReport) => void; written: () => Promise<void> } {
    const { writeNow } = store;
    if (writeNow) return { report: (changes) => writeNow(id, changes), written: async () => undefined };
    let chain: Promise<void> = Promise.resolve();
    return {
      report(changes) {
        chain = chain
          .then(() => store.write(id, changes))
          .catch((error: unknown) => logger.error({ err: error, jobId: id }, 'a job report was not written'));
      },
      written: () => chain,
    };
  }

  /**
   * Starts a job whose row is `queued`: writes it `running` while it still is, in one statement, or (`held`) reads
   * it and holds that write, still only while queued, for the kind's first commit. Undefined when it is no longer
   * queued: cancelled while it waited, or removed with its site.
   */
  async function start(id: string, heldStart = false): Promise<Started | undefined> {
    const batch = transactional
      ? createAsyncWriteBatch(transactional.transaction)
      : createWriteBatch((work) => repository.transaction(work));
    if (!heldStart) {
      const job = await store.start(id, now());
      return job && { job, batch };
    }
    const queued = await store.find(id);
    if (queued?.state !== 'queued') return undefined;
    const startedAt = now();
    batch.later(
      heldWrite(
        (tx) => transactional!.start(id, startedAt, tx),
        () => void repository.start(id, startedAt),
      ),
    );
    return { job: { ...queued, state: 'running', startedAt, attempts: queued.attempts + 1 }, batch };
  }

  /**
   * Runs a started job, then writes its outcome, unless the kind held that very outcome and committed it. What the
   * kind still holds when it settles is dropped: a kind commits what it keeps (a crash's half-done writes are not
   * kept). A job that threw (a bug: a kind never throws on a failure of the job) ends `failed` all the same, then
   * rethrows.
   */
  async function runStarted(
    { job, batch }: Started,
    work: (job: JobRow, context: JobContext) => Promise<Settlement>,
  ): Promise<Settlement> {
    const { id } = job;
    let held: JobOutcome | undefined;
    let heldWritten = false;
    const { report, written } = reporter(id);
    const context: JobContext = {
      progress: (progress) => report({ progress: JSON.stringify(progress) }),
      params: (params) => report({ params: JSON.stringify(params) }),
      note: (message) => report({ message }),
      batch,
      hold: {
        progress(progress) {
          const stored = JSON.stringify(progress);
          batch.later(
            heldWrite(
              (tx) => transactional!.write(id, { progress: stored }, tx),
              () => repository.write(id, { progress: stored }),
            ),
          );
        },
        outcome(outcome) {
          held = outcome;
          const end = endOf(outcome, now);
          const written = () => void (heldWritten = true);
          batch.later(
            heldWrite(
              (tx) => transactional!.finish(id, end, { replacing: true }, tx).then(written),
              () => {
                repository.write(id, end);
                written();
              },
            ),
          );
          return { ...end, progress: end.progress ?? job.progress };
        },
      },
    };
    let settlement: Settlement;
    try {
      settlement = await work(job, context);
    } catch (error) {
      await written();
      await finish(id, { state: 'failed', reason: 'internal-error', message: (error as Error).message }, heldWritten);
      throw error;
    }
    await written();
    const outcome = settlement.outcome ?? {
      state: 'failed',
      reason: 'internal-error',
      message: 'the job ended without an outcome',
    };
    if (outcome !== held || !heldWritten) await finish(id, outcome, heldWritten);
    return settlement;
  }

  /**
   * A job written `queued`; with its kind's own row (`own`) in one transaction: the store's where it has one
   * (PostgreSQL, `own` given it), else one synchronous SQLite transaction (`own` called without one, at once).
   */
  const create = <T = undefined>(job: NewJob, own?: OwnRow<T>) => insertWithOwn(newJobRow(job), own);

  /** A job row written with its kind's own row, as `create` says; alone through the store when there is none. */
  async function insertWithOwn<T>(row: NewJobRow, own?: OwnRow<T>): Promise<{ job: JobRow; own: T }> {
    if (!own) return { job: await store.insert(row), own: undefined as T };
    if (store.insertWith) return store.insertWith(row, async (tx) => own(tx));
    return repository.transaction(() => ({ own: writtenAtOnce(own()), job: repository.insert(row) }));
  }

  /** A revision's columns as stored. */
  const revisionOf = ({ id: _id, progress, ...end }: JobRevision) => ({
    ...end,
    progress: progress === undefined ? undefined : JSON.stringify(progress),
  });

  /** A finished job's outcome revised at once, inside a synchronous SQLite transaction of the runner's. */
  const reviseAtOnce = (revision: JobRevision) => repository.write(revision.id, revisionOf(revision), 'finished');

  /** Finished jobs' outcomes revised, in one transaction (`tx`'s when given); a job not finished (or gone) stays as it is. */
  async function revise(revisions: readonly JobRevision[], tx?: StateDb): Promise<void> {
    if (!transactional) {
      repository.transaction(() => revisions.forEach(reviseAtOnce));
      return;
    }
    const reviseOn = async (on: StateDb) => {
      for (const revision of revisions) await transactional.revise(revision.id, revisionOf(revision), on);
    };
    await (tx ? reviseOn(tx) : transactional.transaction(reviseOn));
  }

  /** A child as written: queued, or already ended (`ended`: a site a bulk update cannot start). */
  const childRow = (child: NewChildJob): JobRow => ({
    ...newJobRow(child),
    reason: null,
    message: null,
    attempts: 0,
    startedAt: null,
    finishedAt: null,
    ...(child.ended && {
      ...endOf(child.ended, now),
      progress: JSON.stringify(child.ended.progress ?? child.progress ?? {}),
    }),
  });

  return {
    finish,
    start,
    runStarted,
    create,

    /**
     * A parent job and its children in one transaction, with the finished job it applies revised; the rows as
     * written (the children's not read back).
     */
    async createWithChildren(
      job: NewJob,
      children: readonly NewChildJob[],
      applying?: Applying,
    ): Promise<{ job: JobRow; children: JobRow[] }> {
      const rows = children.map(childRow);
      if (!transactional)
        return repository.transaction(() => {
          if (applying) reviseAtOnce({ id: applying.id, ...applying.revision(repository.find(applying.id), job.id) });
          const parent = repository.insert(newJobRow(job));
          repository.insertMany(rows);
          return { job: parent, children: rows };
        });
      // The job it applies read and locked first: two requests applying one preview at once take turns, and the
      // second finds it applied (the kind's `revision` throws).
      return transactional.transaction(async (tx) => {
        if (applying) {
          const { id } = applying;
          const revision = applying.revision(await transactional.findLocked(id, tx), job.id);
          await revise([{ id, ...revision }], tx);
        }
        const parent = await transactional.insert(newJobRow(job), tx);
        await transactional.insertMany(rows, tx);
        return { job: parent, children: rows };
      });
    },

    async record<T = undefined>(job: EndedJob, own?: OwnRow<T>): Promise<{ job: JobRow; own: T }> {
      const ended = {
        ...newJobRow(job),
        state: job.state,
        reason: job.reason ?? null,
        message: job.message ?? null,
        attempts: job.attempts,
        startedAt: job.startedAt,
        finishedAt: job.finishedAt ?? now(),
      };
      return insertWithOwn(ended, own);
    },

    /** A queued job ended without running, as `outcome` says; one that is no longer queued stays as it is. */
    endQueued: (id: string, outcome: JobOutcome): Promise<JobRow | undefined> =>
      store.endQueued(id, endOf(outcome, now)),

    /**
     * As `endQueued`, in the transaction a kind's hook runs in (`cancelQueued`): on its `tx` when given (the job
     * store's), else at once in the runner's synchronous SQLite transaction.
     */
    endQueuedIn: (id: string, outcome: JobOutcome, tx?: StateDb): JobRow | undefined | Promise<JobRow | undefined> =>
      tx
        ? transactional!.endQueued(id, endOf(outcome, now), tx)
        : (repository.update(id, endOf(outcome, now), 'queued') ?? repository.find(id)),

    revise,
  };
}
