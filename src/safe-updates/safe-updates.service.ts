// The safe-updates feature's service: a safe update queued as a job (`start`) or run in the caller's
// own job (`safeUpdate`), the job kind and its recovery, the update history and `onSettled` told of
// each decision, the reports read back, and the rollback secret. The run itself is safe-update-run.ts
// (prepare, safe-update-flow.ts, the last resort), the reads safe-update-queries.ts.
import type { Logger } from 'pino';
import type { JobRunner } from '../jobs/job-runner.js';
import type { Clock } from '../shared/clock.js';
import { isAppError } from '../shared/errors.js';
import { createId } from '../shared/ids.js';
import type { SiteAccess } from '../wordpress/site-access.js';
import type { SiteHttp } from '../wordpress/site-http.js';
import type { FlowDeps } from './safe-update-flow.js';
import type { SafeUpdatesRepository } from './safe-updates.repository.js';
import { SafeUpdatePolicySchema, safeUpdateView, type SafeUpdatePolicy } from './safe-updates.schemas.js';
import type { SafeUpdateRow } from './safe-updates.table.js';
import type { ScreenshotStore } from './visual-check.js';
import type { RollbackPaths } from './rollback-path.js';
import { createLastResort, type BackupJobs } from './last-resort.js';
import { createLastResortSteps } from './last-resort-steps.js';
import { createSafeUpdateQueries } from './safe-update-queries.js';
import { createSafeUpdateRun } from './safe-update-run.js';
import { safeUpdateJobProgress } from './safe-update-job-rows.js';
import type { Actor } from '../shared/actor.js';

const SAFE_UPDATE_KIND = 'safe-update';

export interface SafeUpdateRequest {
  siteId: string;
  type: 'plugin' | 'theme' | 'core';
  slug: string;
  /** The version expected on offer; refused (`version-not-offered`) when the site offers another. */
  version?: string;
  policy?: Partial<SafeUpdatePolicy>;
  /** Who asked: the update history records it (`SafeUpdateHistory.started`). */
  requestedBy?: Actor;
}

/** The update history's hooks for a safe update asked for through the API (`start`): queued, then decided. */
export interface SafeUpdateHistory {
  started(report: SafeUpdateView, requestedBy: Actor | undefined): Promise<void>;
  settled(report: SafeUpdateView): Promise<void>;
}
type SafeUpdateView = ReturnType<typeof safeUpdateView>;

export function createSafeUpdatesService({
  repository,
  access,
  http,
  paths,
  jobs,
  clock,
  logger,
  operationTimeoutMs,
  screenshots,
  backups,
  history,
  concurrency = 2,
  sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
}: {
  repository: SafeUpdatesRepository;
  access: SiteAccess;
  http: SiteHttp;
  /** The sites' standalone rollback paths, shared with plain updates' restore points (one proof cache per site). */
  paths: RollbackPaths;
  jobs: JobRunner;
  clock: Clock;
  logger: Logger;
  operationTimeoutMs: number;
  screenshots: ScreenshotStore;
  /** The backups feature's jobs, for the backup before the update (policy `backup`); none: no last resort. */
  backups?: BackupJobs;
  /** Where safe updates started through the API are written in the update history (bulk ones record their own). */
  history?: SafeUpdateHistory;
  concurrency?: number;
  sleep?: (ms: number) => Promise<void>;
}) {
  const flowDeps: FlowDeps = { http, now: () => clock.now(), sleep, operationTimeoutMs };
  const lastResort = createLastResortSteps({
    lastResort: backups ? createLastResort({ backups, sleep }) : null,
    access,
    flowDeps,
  });
  const { provisionSecret, rollbackPath } = paths;
  const execute = createSafeUpdateRun({
    repository,
    access,
    clock,
    logger,
    flowDeps,
    rollbackPath,
    screenshots,
    lastResort,
  });
  const queries = createSafeUpdateQueries({ repository, access, screenshots });

  jobs.register(SAFE_UPDATE_KIND, {
    pool: { name: 'safe-updates', concurrency },
    exclusive: true,
    // It waits for its own backup (and restore) job of the site: taking the site's turn would deadlock.
    siteTurn: false,
    // Never cut off between the update and the decision; a kill -9 is handled by recovery.
    atShutdown: 'grace',
    cancelsWhileRunning: false,
    run: async (job, signal, context) => {
      const settlement = await execute(job.id, signal, context);
      await settled(await repository.find(job.id));
      return settlement;
    },
    // In the transaction that cancels the job: at once in the runner's on SQLite, on the job store's `tx` in a cluster.
    cancelQueued(job, message, tx) {
      // (on SQLite the history's end is a prepared statement, run at once in the runner's transaction)
      const row = repository.cancel(job.id, clock.now(), message, tx);
      if (!(row instanceof Promise)) return void settled(row);
      return row.then((written) => void settled(written));
    },
    recover: {
      // Queued again, keeping its phase: past the update it resumes at the after-checks and decides.
      async running(job) {
        const message = 'resumed after the daemon stopped';
        await repository.update(job.id, { status: 'queued', message });
        return { requeue: true, message };
      },
    },
  });

  /** Told when a safe update has decided, after the update history (`onSettled`: a bulk item following it). */
  const settledListeners: ((report: SafeUpdateView) => void | Promise<void>)[] = [];

  /**
   * The update history hears how it ended (a bulk update's safe item has no row of this kind: nothing
   * is written), then whoever follows safe updates (`onSettled`). Never rejects: a failure is logged.
   */
  async function settled(row: SafeUpdateRow | undefined): Promise<void> {
    if (!history || !row) return;
    const id = row.id;
    try {
      const view = safeUpdateView(row);
      await history.settled(view);
      for (const listener of settledListeners)
        void Promise.resolve(listener(view)).catch((error: unknown) =>
          logger.error({ err: error, safeUpdateId: id }, 'following a safe update that decided failed'),
        );
    } catch (error) {
      logger.error({ err: error, safeUpdateId: id }, 'writing the update history of a safe update failed');
    }
  }

  /**
   * A safe update's row and its job's, queued, in one transaction: `submit` runs the job in the
   * background, `create` leaves it to the caller (`runWithin`).
   */
  async function create(
    request: SafeUpdateRequest,
    write: JobRunner['submit'] | JobRunner['create'],
  ): Promise<SafeUpdateRow> {
    await access.connected(request.siteId);
    const policy = SafeUpdatePolicySchema.parse(request.policy ?? {});
    const id = createId('sup', clock.now());
    const createdAt = clock.now();
    const job = {
      id,
      kind: SAFE_UPDATE_KIND,
      siteId: request.siteId,
      params: { type: request.type, slug: request.slug },
      progress: safeUpdateJobProgress('queued'),
      createdAt,
    };
    const row = {
      id,
      siteId: request.siteId,
      itemType: request.type,
      slug: request.slug,
      status: 'queued' as const,
      phase: 'queued' as const,
      policy: JSON.stringify(policy),
      toVersion: request.version ?? null,
      createdAt,
    };
    // Synchronous inside the runner's SQLite transaction; on PostgreSQL on the job store's `tx`.
    const { own } = await write(job, (tx) => repository.insertWithJob(row, tx));
    return own;
  }

  return {
    /**
     * `listener` hears each safe update that decided, after its history row is finished: bulk
     * updates end the item the daemon's stop left following it (bulk-recovery.ts).
     */
    onSettled(listener: (report: SafeUpdateView) => void | Promise<void>): void {
      settledListeners.push(listener);
    },

    /** Queues a safe update as a job (the API); answers with it at once. */
    async start(request: SafeUpdateRequest) {
      const row = await create(request, jobs.submit);
      const view = safeUpdateView(row);
      await history?.started(view, request.requestedBy);
      return view;
    },

    /**
     * One safe update, run now in the caller's own job (a bulk or scheduled update's child):
     * recorded, reported and recovered exactly as one started through the API.
     */
    async safeUpdate(request: SafeUpdateRequest, signal: AbortSignal) {
      const row = await create(request, jobs.create);
      await jobs.runWithin(row.id, (_job, context) => execute(row.id, signal, context));
      return safeUpdateView((await repository.find(row.id))!);
    },

    get: queries.get,
    /** A PNG of the report (`before-0.png`, `after-0.png`, `diff-0.png`, …). */
    screenshot: queries.screenshot,
    list: queries.list,

    /** Gives the site a new standalone rollback secret (sites connected before safe updates, or a rotation). */
    provisionRollbackSecret(siteId: string): Promise<{ provisionedAt: string }> {
      return access.read(siteId, async (site) => {
        await provisionSecret(site);
        await rollbackPath(site);
        return { provisionedAt: clock.now().toISOString() };
      });
    },

    /** At connect time: best effort, a safe update provisions it later otherwise. */
    provisionQuietly(siteId: string): void {
      // Never throws into the caller (a lifecycle hook): a site without credentials fails inside the promise.
      Promise.resolve()
        .then(() => access.read(siteId, provisionSecret))
        .catch((error: unknown) =>
          logger.info({ siteId, err: isAppError(error) ? error.detail : String(error) }, 'no rollback secret yet'),
        );
    },

    /** Removes the screenshots of safe updates no longer recorded (their site was removed); how many. */
    removeOrphanScreenshots: queries.removeOrphanScreenshots,

    recover: () => jobs.recover([SAFE_UPDATE_KIND]),
    idle: () => jobs.idle([SAFE_UPDATE_KIND]),
    stop: (graceMs: number) => jobs.stop([SAFE_UPDATE_KIND], { graceMs }),
  };
}

export type SafeUpdatesService = ReturnType<typeof createSafeUpdatesService>;
