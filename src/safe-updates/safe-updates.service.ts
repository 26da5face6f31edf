import { readdir, rm } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { JobRunner, Settlement } from '../jobs/job-runner.js';
import { jobEvent } from '../jobs/job-runner.js';
import type { Clock } from '../shared/clock.js';
import { isAppError } from '../shared/errors.js';
import { storedDataProblems } from '../shared/stored-json.js';
import { createId } from '../shared/ids.js';
import type { StandaloneRollback } from '../wordpress/rollback-client.js';
import type { AvailableUpdates } from '../wordpress/connector-client.js';
import type { ConnectedSite, SiteAccess } from '../wordpress/site-access.js';
import type { SiteHttp } from '../wordpress/site-http.js';
import { checkSiteHealth, describeFailures } from './health-check.js';
import {
  checkUntilHealthy,
  readItem,
  takeRestorePoint,
  updateCheckDecide,
  type FlowDeps,
  type FlowOutcome,
  type FlowRecorder,
} from './safe-update-flow.js';
import { safeUpdatesProblems } from './safe-updates.errors.js';
import type { SafeUpdatesRepository } from './safe-updates.repository.js';
import {
  DEFAULT_BACKUP_WAIT_MINUTES,
  SafeUpdatePolicySchema,
  safeUpdateView,
  storedPolicy,
  storedReport,
  type SafeUpdatePolicy,
} from './safe-updates.schemas.js';
import type { SafeUpdatePhase, SafeUpdateRow } from './safe-updates.table.js';
import { createVisualCheck, readScreenshot, type ScreenshotStore } from './visual-check.js';
import type { RollbackPaths } from './rollback-path.js';
import { createLastResort, type BackupJobs, type SiteWait, type Waited } from './last-resort.js';
import { backupsProblems } from '../backups/index.js';
import type { Actor } from '../shared/actor.js';

const SAFE_UPDATE_KIND = 'safe-update';
const SCREENSHOT_NAME = /^(before|after|diff)-[0-9]{1,2}\.png$/;
/** Phases from which a resumed job goes straight to the after-checks: the site may have changed. */
const AFTER_UPDATE_PHASES: SafeUpdatePhase[] = ['updating', 'after-check', 'rolling-back', 'restoring-backup'];

/** The reason of a safe update refused because the site already failed its before-checks: not the update's fault. */
const SITE_DOWN_BEFORE_UPDATE = 'site-down-before-update';

/** What `update.verified` says of the look: whether a page changed beyond the threshold, and the largest share changed. */
function visualVerdict(row: SafeUpdateRow): { visualChange: boolean; changedRatio: number | null } {
  const report = storedReport(row);
  const ratios = (report.screenshots ?? []).flatMap((shot) => (shot.changedRatio === null ? [] : [shot.changedRatio]));
  return { visualChange: report.visualChange ?? false, changedRatio: ratios.length > 0 ? Math.max(...ratios) : null };
}

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
  started(report: SafeUpdateView, requestedBy: Actor | undefined): void;
  settled(report: SafeUpdateView): void;
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
  const lastResort = backups ? createLastResort({ backups, sleep }) : null;
  const { provisionSecret, rollbackPath } = paths;

  function recorder(id: string): FlowRecorder {
    let row = repository.find(id)!;
    return {
      row: () => row,
      phase(phase, changes = {}) {
        row = repository.update(id, { ...changes, phase }) ?? row;
      },
      report(change) {
        const report = storedReport(row);
        change(report);
        row = repository.update(id, { report: JSON.stringify(report) }) ?? row;
      },
    };
  }

  function finish(id: string, outcome: FlowOutcome): Settlement {
    const row = repository.update(id, { ...outcome, phase: 'done', finishedAt: clock.now() })!;
    const durationMs = row.startedAt ? row.finishedAt!.getTime() - row.startedAt.getTime() : 0;
    const fields = {
      siteId: row.siteId,
      safeUpdateId: row.id,
      type: row.itemType,
      slug: row.slug,
      fromVersion: row.fromVersion,
      toVersion: row.toVersion,
    };
    if (row.status === 'kept')
      return { events: [jobEvent('update.verified', { ...fields, ...visualVerdict(row), durationMs })] };
    if (row.status === 'rolled-back')
      return {
        events: [jobEvent('update.rolled-back', { ...fields, reason: row.reason, message: row.message, durationMs })],
      };
    if (row.status === 'rollback-failed')
      return {
        events: [jobEvent('update.rollback-failed', { ...fields, reason: row.reason, message: row.message })],
      };
    return { events: [] };
  }

  /** Before the update: what is there, the rollback path, the before-checks, the restore point. */
  async function prepare(
    site: ConnectedSite,
    record: FlowRecorder,
    signal: AbortSignal,
  ): Promise<{ refused: FlowOutcome } | { standalone: StandaloneRollback }> {
    const row = record.row();
    const policy = storedPolicy(row);
    const failed = (reason: string, message: string) => ({
      refused: { status: 'failed', reason, message } satisfies FlowOutcome,
    });

    const item = await readItem(site, row.itemType, row.slug);
    if (!item) return failed(`${row.itemType}-not-found`, `${site.site.url} has no ${row.itemType} ${row.slug}`);
    const offerIn = (offers: AvailableUpdates) =>
      row.itemType === 'plugin' ? offers.plugins[item.target]?.newVersion : offers.themes[item.target]?.newVersion;
    // WordPress's last update check first; the update servers only when it knows of nothing. Core:
    // the connector's core/update checks the offer itself (no-update-available, core-version-not-offered).
    const offer =
      row.itemType === 'core'
        ? row.toVersion
        : (offerIn(await site.connector.updates({ refresh: false })) ??
          offerIn(await site.connector.updates({ refresh: true })));
    if (!offer && row.itemType !== 'core')
      return failed('no-update-available', `${row.slug} is at ${item.version} and no newer version is offered`);
    if (row.toVersion && offer && row.toVersion !== offer)
      return failed('version-not-offered', `${row.slug} ${row.toVersion} was asked for; the site offers ${offer}`);
    record.phase('before-check', { fromVersion: item.version, toVersion: offer });
    record.report((report) => (report.item = item));

    const standalone = await rollbackPath(site);
    const before = await checkSiteHealth({ http, site, now: flowDeps.now }, policy);
    record.report((report) => (report.before = [before]));
    if (!before.healthy)
      return failed(
        SITE_DOWN_BEFORE_UPDATE,
        `the site was already down before the update (its checks failed before anything was changed), so nothing was updated: ${describeFailures(before)}`,
      );
    await createVisualCheck(screenshots, record, site.site.url).before();
    if (signal.aborted) return failed('interrupted', 'the daemon stopped before the update');

    record.phase('restore-point');
    const started = Date.now();
    const point = await takeRestorePoint(flowDeps, site, row.itemType, item.target);
    record.phase('restore-point', { restorePointId: point.id, restorePointTarget: point.target });
    record.report((report) => {
      report.steps = [
        ...(report.steps ?? []),
        {
          step: 'restore-point',
          ok: true,
          at: new Date(started).toISOString(),
          durationMs: Date.now() - started,
          detail: `${point.target} saved as ${point.id} (${point.bytes} bytes)`,
        },
      ];
    });
    return { standalone };
  }

  /** Runs a safe update whose row exists (queued, or left running by a crash), to a decided state. */
  function addStep(record: FlowRecorder, step: string, ok: boolean, started: number, detail?: string): void {
    record.report((report) => {
      report.steps = [
        ...(report.steps ?? []),
        {
          step,
          ok,
          at: new Date(started).toISOString(),
          durationMs: Date.now() - started,
          ...(detail ? { detail } : {}),
        },
      ];
    });
  }

  /**
   * How long the backup (or restore) of the last resort waits for one of the site's own already
   * under way (its scheduled backup): one runs per site. The wait is the phase `waiting-for-backup`
   * and the running safe update's message, then a `wait-for-backup` step of the report.
   */
  function siteWait(record: FlowRecorder, phase: SafeUpdatePhase, before: string): SiteWait {
    // (a policy stored before backupWaitMinutes existed reads with its default)
    const minutes = storedPolicy(record.row()).backupWaitMinutes;
    const limitMinutes = minutes ?? DEFAULT_BACKUP_WAIT_MINUTES;
    return {
      limitMs: limitMinutes * 60_000,
      onWait: (busy) =>
        record.phase(phase, {
          message: `waiting for the site's ${busy.label} to finish before ${before} (at most ${limitMinutes} min)`,
        }),
    };
  }

  function recordWait(record: FlowRecorder, waited: Waited, started: number, stillBusy: boolean): void {
    if (!waited) return;
    const seconds = Math.round(waited.ms / 1000);
    addStep(
      record,
      'wait-for-backup',
      !stillBusy,
      started,
      `the site's ${waited.busy.label} ${stillBusy ? 'was still running after' : 'finished after'} ${seconds} s`,
    );
  }

  /**
   * Before the update, outside the site's queue (the backup runs as its own job): the last resort.
   * A backup of the site still running at the end of the wait: refused, nothing updated (an update
   * under a running backup would leave that backup half old, half new, and this one untaken).
   */
  async function takeBackup(record: FlowRecorder): Promise<FlowOutcome | null> {
    const row = record.row();
    const policy = storedPolicy(row);
    if (!lastResort || !policy.backup) return null;
    record.phase('backup');
    const started = Date.now();
    const wait = siteWait(record, 'waiting-for-backup', 'taking its own backup');
    const backup = await lastResort.backup(row.siteId, wait);
    recordWait(record, backup.waited, started, backup.busy !== undefined);
    if (backup.busy)
      return {
        status: 'failed',
        reason: backupsProblems.inProgress.name,
        message: `the site's ${backup.busy.label} was still running after ${Math.round(wait.limitMs / 60_000)} min (policy backupWaitMinutes), so no backup was taken and nothing was updated; try again when it has finished`,
      };
    record.phase('backup', { backupId: backup.id, ...(backup.waited ? { message: null } : {}) });
    addStep(record, 'backup', backup.id !== null, started + (backup.waited?.ms ?? 0), backup.detail);
    return null;
  }

  /** Putting the saved copy back did not heal the site: restore the backup taken before the update, check again. */
  async function restoreBackup(record: FlowRecorder, outcome: FlowOutcome): Promise<FlowOutcome> {
    const row = record.row();
    if (outcome.status !== 'rollback-failed' || !lastResort || !row.backupId) return outcome;
    record.phase('restoring-backup');
    const started = Date.now();
    const restored = await lastResort.restore(
      row.siteId,
      row.backupId,
      siteWait(record, 'restoring-backup', `restoring backup ${row.backupId}`),
    );
    recordWait(record, restored.waited, started, restored.busy !== undefined);
    addStep(record, 'restore-backup', restored.ok, started + (restored.waited?.ms ?? 0), restored.detail);
    if (!restored.ok)
      return { ...outcome, message: `${outcome.message}; restoring backup ${row.backupId} failed: ${restored.detail}` };
    const checks = await access.read(row.siteId, (site) => checkUntilHealthy(flowDeps, site, storedPolicy(row)));
    record.report((report) => (report.afterRollback = [...(report.afterRollback ?? []), ...checks]));
    if (!checks[checks.length - 1]!.healthy)
      return { ...outcome, message: `${outcome.message}; still unhealthy after restoring backup ${row.backupId}` };
    return {
      status: 'rolled-back',
      reason: outcome.reason,
      message: `${outcome.message}; healed by restoring backup ${row.backupId}`,
    };
  }

  /** Runs a safe update whose row exists (queued, or left running by a crash), to a decided state. */
  async function execute(id: string, signal: AbortSignal): Promise<Settlement> {
    const resumed = repository.find(id)!;
    const resuming = AFTER_UPDATE_PHASES.includes(resumed.phase);
    repository.update(id, { status: 'running', startedAt: resumed.startedAt ?? clock.now() });
    const record = recorder(id);
    try {
      let decided: FlowOutcome;
      if (resuming) {
        addStep(record, 'resumed', true, Date.now(), `from ${resumed.phase}`);
        decided = await access.operate(resumed.siteId, async (site) => {
          const visual = createVisualCheck(screenshots, record, site.site.url);
          return updateCheckDecide(flowDeps, site, await rollbackPath(site), record, null, visual);
        });
      } else {
        const prepared = await access.operate(resumed.siteId, (site) => prepare(site, record, signal));
        if ('refused' in prepared) return finish(id, prepared.refused);
        const refused = await takeBackup(record);
        if (refused) return finish(id, refused);
        decided = await access.operate(resumed.siteId, async (site) => {
          const row = record.row();
          const item = storedReport(row).item;
          // prepare() wrote it: a report without it is one this version cannot read.
          if (!item)
            throw storedDataProblems.unreadable.create(`the report of safe update ${row.id} does not name its item`);
          const target = item.target;
          const update = async () => {
            if (row.itemType === 'plugin') await site.connector.updatePlugin(target);
            else if (row.itemType === 'theme') await site.connector.updateTheme(target);
            else await site.connector.updateCore(row.toVersion ?? undefined);
          };
          const visual = createVisualCheck(screenshots, record, site.site.url);
          return updateCheckDecide(flowDeps, site, prepared.standalone, record, update, visual);
        });
      }
      return finish(id, await restoreBackup(record, decided));
    } catch (error) {
      const reason = isAppError(error) ? error.problem.name : 'internal-error';
      if (!isAppError(error)) logger.error({ err: error, safeUpdateId: id }, 'safe update crashed');
      const row = repository.find(id)!;
      // Past the restore point, an unexpected failure leaves the site in doubt: say so loudly.
      const status = AFTER_UPDATE_PHASES.includes(row.phase) ? 'rollback-failed' : 'failed';
      return finish(id, { status, reason, message: error instanceof Error ? error.message : String(error) });
    }
  }

  jobs.register(SAFE_UPDATE_KIND, {
    pool: { name: 'safe-updates', concurrency },
    exclusive: true,
    // It waits for its own backup (and restore) job of the site: taking the site's turn would deadlock.
    siteTurn: false,
    // Never cut off between the update and the decision; a kill -9 is handled by recovery.
    atShutdown: 'grace',
    cancelsWhileRunning: false,
    run: async (job, signal) => {
      const settlement = await execute(job.id, signal);
      settled(job.id);
      return settlement;
    },
    cancelQueued: (job, message) => {
      repository.update(job.id, {
        status: 'failed',
        reason: 'cancelled',
        message,
        phase: 'done',
        finishedAt: clock.now(),
      });
      settled(job.id);
    },
    recover: {
      // Queued again, keeping its phase: past the update it resumes at the after-checks and decides.
      running(job) {
        repository.update(job.id, { status: 'queued', message: 'resumed after the daemon stopped' });
        return { events: [] };
      },
    },
  });

  /** Told when a safe update has decided, after the update history (`onSettled`: a bulk item following it). */
  const settledListeners: ((report: SafeUpdateView) => void)[] = [];

  /**
   * The update history hears how it ended (a bulk update's safe item has no row of this kind: nothing
   * is written), then whoever follows safe updates (`onSettled`).
   */
  function settled(id: string): void {
    const row = repository.find(id);
    if (!history || !row) return;
    try {
      const view = safeUpdateView(row);
      history.settled(view);
      for (const listener of settledListeners) listener(view);
    } catch (error) {
      logger.error({ err: error, safeUpdateId: id }, 'writing the update history of a safe update failed');
    }
  }

  function create(request: SafeUpdateRequest, status: 'queued' | 'running'): SafeUpdateRow {
    access.connected(request.siteId);
    const policy = SafeUpdatePolicySchema.parse(request.policy ?? {});
    return repository.insert({
      id: createId('sup', clock.now()),
      siteId: request.siteId,
      itemType: request.type,
      slug: request.slug,
      status,
      phase: 'queued',
      policy: JSON.stringify(policy),
      toVersion: request.version ?? null,
      createdAt: clock.now(),
      startedAt: status === 'running' ? clock.now() : null,
    });
  }

  return {
    /**
     * `listener` hears each safe update that decided, after its history row is finished: bulk
     * updates end the item the daemon's stop left following it (bulk-recovery.ts).
     */
    onSettled(listener: (report: SafeUpdateView) => void): void {
      settledListeners.push(listener);
    },

    /** Queues a safe update as a job (the API); answers with it at once. */
    start(request: SafeUpdateRequest) {
      const row = create(request, 'queued');
      const view = safeUpdateView(row);
      history?.started(view, request.requestedBy);
      jobs.enqueue(SAFE_UPDATE_KIND, row.id, row.siteId);
      return view;
    },

    /**
     * One safe update, run now in the caller's own job (a bulk or scheduled update's child):
     * recorded, reported and recovered exactly as one started through the API.
     */
    async safeUpdate(request: SafeUpdateRequest, signal: AbortSignal) {
      const row = create(request, 'running');
      const settlement = await execute(row.id, signal);
      jobs.report({ id: row.id, kind: SAFE_UPDATE_KIND, siteId: row.siteId }, settlement);
      return safeUpdateView(repository.find(row.id)!);
    },

    get(siteId: string, id: string) {
      access.connected(siteId);
      const row = repository.findForSite(siteId, id);
      if (!row) throw safeUpdatesProblems.notFound.create(`site ${siteId} has no safe update ${id}`);
      return safeUpdateView(row);
    },

    /** A PNG of the report (`before-0.png`, `after-0.png`, `diff-0.png`, …). */
    async screenshot(siteId: string, id: string, name: string): Promise<Buffer> {
      this.get(siteId, id);
      // Only the names a report lists: never a path out of the safe update's folder.
      const png = SCREENSHOT_NAME.test(name) ? await readScreenshot(screenshots, id, name) : null;
      if (!png) throw safeUpdatesProblems.screenshotNotFound.create(`safe update ${id} has no ${name}`);
      return png;
    },

    list(siteId: string, limit = 50) {
      access.connected(siteId);
      return repository.listForSite(siteId, limit).map(safeUpdateView);
    },

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
    async removeOrphanScreenshots(): Promise<number> {
      const names = await readdir(screenshots.root).catch(() => [] as string[]);
      let removed = 0;
      for (const name of names) {
        if (repository.find(name)) continue;
        await rm(screenshots.dir(name), { recursive: true, force: true });
        removed++;
      }
      return removed;
    },

    recover: () => jobs.recover([SAFE_UPDATE_KIND]),
    idle: () => jobs.idle([SAFE_UPDATE_KIND]),
    stop: (graceMs: number) => jobs.stop([SAFE_UPDATE_KIND], { graceMs }),
  };
}

export type SafeUpdatesService = ReturnType<typeof createSafeUpdatesService>;
