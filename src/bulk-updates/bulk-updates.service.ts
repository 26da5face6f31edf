import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { jobEvent, wasCancelled, type JobKind, type JobRunner, type Settlement } from '../jobs/job-runner.js';
import type { JobsRepository } from '../jobs/jobs.repository.js';
import type { JobRow } from '../jobs/jobs.table.js';
import { underOwnBound } from '../jobs/site-task-queue.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import { isAppError, isProblem } from '../shared/errors.js';
import { createId } from '../shared/ids.js';
import { storedDataProblems } from '../shared/stored-json.js';
import { sitesProblems } from '../sites/index.js';
import { bulkUpdatesProblems } from './bulk-updates.errors.js';
import {
  childId,
  type BulkUpdatesRepository,
  type SafeUpdateFacts,
  type SiteFacts,
} from './bulk-updates.repository.js';
import {
  attemptEndOf,
  hasDecided,
  itemAfterSafeUpdate,
  siteAfterStop,
  STOPPED_BEFORE_ITEM,
  STOPPED_BEFORE_SITE,
  STOPPED_DURING_PLAIN,
  STOPPED_DURING_RUN,
  STOPPED_DURING_SAFE_ITEM,
  type StoppedItem,
} from './bulk-recovery.js';
import { runView, stored, type BulkParams, type ChildParams } from './bulk-run-view.js';
import type { ItemOutcome, PlannedItem, SiteUpdater } from './site-updater.js';
import { createWriteBatch } from '../db/write-batch.js';
import type { BulkUpdateInput } from './bulk-updates.schemas.js';
import { previewToApply } from './preview.js';
import { SafeUpdatePolicySchema, type SafeUpdatePolicy } from '../safe-updates/index.js';
import { resolveSelection, type BulkTarget } from './selection.js';
import type { HistoryFilter, TriggerKind, UpdateHistoryRepository } from '../update-history/index.js';
import { hostOf, type UpdateSlots } from './update-slots.js';

export interface BulkUpdateRequest {
  targets: BulkTarget[];
  trigger: { kind: TriggerKind; id: string | null };
  dryRun?: boolean;
  /** Each plugin, theme and core item as a safe update. */
  safe?: boolean;
  /** How those safe updates check the sites and when they roll back (a single safe update's `policy`); none: its defaults. */
  checks?: Partial<SafeUpdatePolicy>;
  /** Sites not started by then end `skipped` (`window-closed`). */
  notAfter?: Date | string;
}

const BULK = 'bulk-update';
const CHILD = 'site-update';
/** A site's updates as safe updates: each waits for its own backup job, so it cannot hold the site's turn. */
const SAFE_CHILD = 'safe-site-update';
const BULK_UPDATE_KINDS = [BULK, CHILD, SAFE_CHILD] as const;
/** How many bulk jobs coordinate at once; each is cheap (the site updates share the update slots). */
const BULK_JOBS_AT_ONCE = 4;
const INTERRUPTED = STOPPED_BEFORE_SITE;
/**
 * How often a running bulk job's stored counts follow its sites: at most once this often, and when it ends. They are
 * a summary (the run's view counts its sites' rows; recovery counts them again), so a crash loses nothing by it.
 */
const PROGRESS_WRITE_MS = 1_000;

/** How a site update ended, as its bulk job counts it. */
type ChildEnd = Pick<JobRow, 'state' | 'reason' | 'progress'>;

/**
 * Bulk updates: one `bulk-update` job per request or policy run, one `site-update` child job per
 * site. The bulk job starts its children as the shared slots allow (a global bound and one per
 * host), never two on one site at once nor beside a backup or restore of it (the children are
 * exclusive jobs); one site's failure never stops the others.
 */
export function createBulkUpdatesService({
  repository,
  history,
  jobRows,
  jobs,
  slots,
  updateSite,
  clock,
  events,
  logger,
  refreshInventory = () => Promise.resolve(),
}: {
  repository: BulkUpdatesRepository;
  history: Pick<UpdateHistoryRepository, 'list' | 'endAbandoned' | 'finish' | 'finishSafeUpdate'>;
  jobRows: JobsRepository;
  jobs: JobRunner;
  slots: UpdateSlots;
  updateSite: SiteUpdater;
  clock: Clock;
  events: Events;
  logger: Logger;
  /** Reads a site's inventory again (after the daemon stopped during a plain update of it). */
  refreshInventory?: (siteId: string) => Promise<unknown>;
}) {
  /**
   * Children started by a bulk job in this process, settled when the child has run (with how it
   * ended, as written) or was cancelled while queued (then read back).
   */
  const settled = new Map<string, (ended?: ChildEnd) => void>();
  const settle = (id: string, ended?: ChildEnd) => {
    const counted = settled.get(id);
    settled.delete(id);
    counted?.(ended);
  };
  /** What the children of the bulk jobs running in this process need of them: read once a bulk job, not once a site. */
  const running = new Map<string, Pick<BulkParams, 'trigger' | 'safe' | 'checks'>>();
  /**
   * The bulk jobs running in this process, each to be told of a child cancelled on its own (`POST /api/jobs/{id}/cancel`)
   * before the bulk job started it: it leaves the child out of what it still has to start, and counts it.
   */
  const droppers = new Map<string, (childId: string) => void>();

  function plan(targets: BulkTarget[]): { site: SiteFacts; items: PlannedItem[] }[] {
    const bySite = new Map<string, BulkTarget[]>();
    for (const target of targets) {
      const siteTargets = bySite.get(target.siteId);
      if (siteTargets) siteTargets.push(target);
      else bySite.set(target.siteId, [target]);
    }
    const known = new Map(repository.sites({ ids: [...bySite.keys()] }).map((site) => [site.id, site]));
    const unknown = [...bySite.keys()].filter((id) => !known.has(id));
    if (unknown.length > 0)
      throw sitesProblems.notFound.create(`there is no site with the id ${unknown.slice(0, 10).join(', ')}`, {
        siteIds: unknown.slice(0, 100),
      });
    // Versions installed, for the plugins and themes whose caller did not give them (a resolved selection does).
    const unread = new Set(
      targets.filter((target) => target.slug !== undefined && target.fromVersion === undefined).map((t) => t.siteId),
    );
    const installed = new Map(
      (unread.size === 0 ? [] : repository.items([...unread], { pendingOnly: false })).map((row) => [
        `${row.siteId}\t${row.type}\t${row.slug}`,
        row,
      ]),
    );
    return [...bySite.entries()].map(([siteId, siteTargets]) => {
      const site = known.get(siteId)!;
      const seen = new Set<string>();
      const items: PlannedItem[] = [];
      for (const target of siteTargets) {
        const slug = target.type === 'plugin' || target.type === 'theme' ? (target.slug ?? null) : null;
        const key = `${target.type}\t${slug ?? ''}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const row = slug === null ? undefined : installed.get(`${siteId}\t${target.type}\t${slug}`);
        items.push({
          type: target.type,
          slug,
          fromVersion: target.type === 'core' ? site.wordpressVersion : (target.fromVersion ?? row?.version ?? null),
          toVersion: target.version ?? row?.updateVersion ?? null,
        });
      }
      return { site, items };
    });
  }

  /**
   * Creates the bulk job (and its children) and queues it; a dry run is recorded finished, with its
   * plan. The rows as written: the answer to the request is made from them, not read back.
   */
  function startBulkUpdate({ targets, trigger, dryRun = false, safe = false, checks, notAfter }: BulkUpdateRequest): {
    job: JobRow;
    children: JobRow[];
  } {
    const sitesPlanned = plan(targets);
    const closesAt = notAfter === undefined ? null : new Date(notAfter).toISOString();
    const now = clock.now();
    const id = createId('bulk', now);
    const params: BulkParams = {
      trigger,
      dryRun,
      safe,
      ...(checks ? { checks: SafeUpdatePolicySchema.parse(checks) } : {}),
      notAfter: closesAt,
      sites: sitesPlanned.length,
    };
    if (dryRun) {
      const planned = sitesPlanned.map(({ site, items }) => ({ siteId: site.id, url: site.url, items }));
      const job = jobRows.insert({
        id,
        kind: BULK,
        siteId: null,
        state: 'succeeded',
        params: JSON.stringify(params),
        progress: JSON.stringify({ plan: planned }),
        createdAt: now,
        finishedAt: now,
      });
      return { job, children: [] };
    }
    const children = sitesPlanned.map(({ site, items }, index): JobRow => {
      const child: ChildParams = { bulkId: id, url: site.url, host: hostOf(site.url), items };
      const connected = site.state === 'connected';
      return {
        id: childId(id, index),
        kind: safe ? SAFE_CHILD : CHILD,
        siteId: site.id,
        state: connected ? 'queued' : 'cancelled',
        reason: connected ? null : 'site-not-connected',
        message: connected ? null : `the site is ${site.state}`,
        progress: '{}',
        params: JSON.stringify(child),
        attempts: 0,
        createdAt: now,
        startedAt: null,
        finishedAt: connected ? null : now,
      };
    });
    const job = jobRows.transaction(() => {
      const bulk = jobRows.insert({
        id,
        kind: BULK,
        siteId: null,
        state: 'queued',
        params: JSON.stringify(params),
        progress: JSON.stringify(progressOf(children)),
        createdAt: now,
      });
      jobRows.insertMany(children);
      return bulk;
    });
    events.emit('bulk-update.started', {
      bulkId: id,
      triggerKind: trigger.kind,
      triggerId: trigger.id,
      sites: children.length,
      items: sitesPlanned.reduce((sum, site) => sum + site.items.length, 0),
    });
    // Started on a later turn (the job runner's queue): the rows above are still what the database holds.
    jobs.enqueue(BULK, id, null);
    return { job, children };
  }

  function progressOf(children: Pick<JobRow, 'state' | 'reason' | 'progress'>[]) {
    const counts = { total: children.length, done: 0, succeeded: 0, failed: 0, skipped: 0, cancelled: 0 };
    for (const child of children) {
      const state = runView.siteState(child);
      if (state === 'queued' || state === 'running') continue;
      counts.done++;
      counts[state]++;
    }
    return counts;
  }

  /** A job whose stored params cannot be read ends failed with that reason (`stored-data-unreadable`), never crashed. */
  function unreadable(row: JobRow, error: unknown): { reason: string; message: string } {
    if (!isProblem(error, storedDataProblems.unreadable)) throw error;
    const ending = { reason: error.problem.name, message: error.detail };
    logger.error({ err: error, jobId: row.id }, 'a job’s stored data could not be read');
    jobRows.update(row.id, { state: 'failed', ...ending, finishedAt: clock.now() });
    return ending;
  }
  const parseBulkIdOrNull = (child: JobRow): string | null => {
    try {
      return stored.childParams(child).bulkId;
    } catch {
      return null;
    }
  };

  /** A child not started: cancelled (the bulk job was), or skipped (its window closed, the daemon stopped). */
  const leaveUnstarted = (child: JobRow, reason: string, message: string): JobRow =>
    jobRows.update(child.id, { state: 'cancelled', reason, message, finishedAt: clock.now() }) ?? child;

  async function runBulk(job: JobRow, signal: AbortSignal): Promise<Settlement> {
    const startedAt = clock.now();
    jobRows.write(job.id, { state: 'running', startedAt, attempts: job.attempts + 1 });
    let params: BulkParams;
    try {
      params = stored.bulkParams(job);
    } catch (error) {
      // What was asked cannot be known: no site starts, each says why.
      const { reason } = unreadable(job, error);
      for (const child of repository.children(job.id))
        if (child.state === 'queued')
          leaveUnstarted(child, reason, 'the bulk update’s stored params could not be read');
      return { events: [] };
    }
    const notAfter = params.notAfter ? new Date(params.notAfter) : null;
    const children = repository.children(job.id);
    // Counted as sites end, never by reading every child again: a bulk update may have thousands.
    const progress = progressOf(children);
    const count = (child: ChildEnd) => {
      const state = runView.siteState(child);
      if (state === 'queued' || state === 'running') return;
      progress.done++;
      progress[state]++;
    };
    // Sites not started yet, by host, each host's in their order (reversed: the next one is popped).
    const pending = new Map<string, JobRow[]>();
    for (const child of children.filter((row) => row.state === 'queued').reverse()) {
      let host: string;
      try {
        ({ host } = stored.childParams(child));
      } catch (error) {
        unreadable(child, error);
        count(jobRows.find(child.id) ?? child);
        continue;
      }
      const queue = pending.get(host);
      if (queue) queue.push(child);
      else pending.set(host, [child]);
    }
    const leaveAll = (reason: string, message: string) => {
      for (const queue of pending.values()) for (const child of queue) count(leaveUnstarted(child, reason, message));
      pending.clear();
    };
    const started = new Set<string>();
    let written = job.progress;
    let writtenAt = 0;
    // The loop sleeps until a site ends, the job is stopped, or counts not yet written may be (a long site update must
    // not hold them back); a slot another bulk job releases wakes it too. One waker, not a race over every site's promise.
    let wakeUp: (() => void) | null = null;
    const wake = () => {
      wakeUp?.();
      wakeUp = null;
    };
    let writeDue = false;
    signal.addEventListener('abort', wake, { once: true });

    const startChild = (child: JobRow, host: string) => {
      settled.set(child.id, (ended) => {
        slots.release(host);
        started.delete(child.id);
        count(ended ?? jobRows.find(child.id) ?? child);
        wake();
      });
      started.add(child.id);
      jobs.enqueue(child.kind, child.id, child.siteId);
    };

    droppers.set(job.id, (childId) => {
      for (const [host, queue] of pending) {
        const at = queue.findIndex((child) => child.id === childId);
        if (at < 0) continue;
        queue.splice(at, 1);
        if (queue.length === 0) pending.delete(host);
        count(jobRows.find(childId) ?? { state: 'cancelled', reason: 'cancelled', progress: '{}' });
        wake();
        return;
      }
    });
    running.set(job.id, { trigger: params.trigger, safe: params.safe, checks: params.checks });
    try {
      while (pending.size > 0 || started.size > 0) {
        if (signal.aborted) {
          if (wasCancelled(signal)) leaveAll('cancelled', 'the bulk update was cancelled before this site started');
          else leaveAll('interrupted', INTERRUPTED);
          // Children waiting in the job runner (behind a backup of their site) are cancelled too; running ones finish.
          for (const id of [...started])
            if (jobRows.find(id)?.state === 'queued') {
              jobs.cancel(id);
              settle(id);
            }
        } else if (notAfter && clock.now().getTime() >= notAfter.getTime()) {
          leaveAll('window-closed', `not started before ${notAfter.toISOString()}`);
        } else {
          // A full host is passed over for the next one; the global bound stops every host.
          for (const [host, queue] of pending) {
            while (queue.length > 0 && slots.tryTake(host)) startChild(queue.pop()!, host);
            if (queue.length === 0) pending.delete(host);
          }
        }
        if (pending.size === 0 && started.size === 0) break;
        // A write when the counts changed (a turn of the loop that started sites only changes nothing), at most once a PROGRESS_WRITE_MS.
        const counted = JSON.stringify(progress);
        if (counted !== written) {
          const wait = writtenAt + PROGRESS_WRITE_MS - Date.now();
          if (wait <= 0) {
            jobRows.write(job.id, { progress: (written = counted) });
            writtenAt = Date.now();
          } else if (!writeDue) {
            writeDue = true;
            void sleep(wait, undefined, { ref: false }).then(() => {
              writeDue = false;
              wake();
            });
          }
        }
        // Once stopped, only the running sites are waited for (the abort has been seen).
        const woken = new Promise<void>((resolve) => (wakeUp = resolve));
        await (signal.aborted ? woken : Promise.race([slots.released(), woken]));
      }
    } finally {
      running.delete(job.id);
      droppers.delete(job.id);
    }

    const finishedAt = clock.now();
    const state = wasCancelled(signal)
      ? 'cancelled'
      : signal.aborted
        ? 'failed'
        : progress.failed > 0
          ? 'failed'
          : 'succeeded';
    const reason =
      state === 'cancelled' ? 'cancelled' : signal.aborted ? 'interrupted' : state === 'failed' ? 'sites-failed' : null;
    jobRows.write(job.id, {
      state,
      reason,
      message: state === 'failed' && !signal.aborted ? `${progress.failed} of ${progress.total} sites failed` : null,
      progress: JSON.stringify(progress),
      finishedAt,
    });
    return {
      events: [
        jobEvent('bulk-update.finished', {
          bulkId: job.id,
          state,
          total: progress.total,
          succeeded: progress.succeeded,
          failed: progress.failed,
          skipped: progress.skipped,
          cancelled: progress.cancelled,
          durationMs: finishedAt.getTime() - startedAt.getTime(),
        }),
      ],
      interrupted: signal.aborted && !wasCancelled(signal),
    };
  }

  /**
   * One site's updates. Its writes go through one write batch: its start commits with the first
   * attempt's history row, its end with the last attempt's and the inventory patch (two commits
   * for a site's plugin and theme updates, not one per row).
   */
  async function runChild(job: JobRow): Promise<Settlement> {
    const batch = createWriteBatch(jobRows.transaction);
    let end: ReturnType<typeof endOf> | null = null;
    const endOf = (outcomes: ItemOutcome[]) => {
      const failed = outcomes.filter((item) => item.state === 'failed');
      return {
        state: failed.length > 0 ? ('failed' as const) : ('succeeded' as const),
        reason: failed[0]?.reason ?? null,
        progress: JSON.stringify({ items: outcomes }),
        message:
          failed.length > 0
            ? failed.map((item) => `${item.type} ${item.slug ?? ''}: ${item.message}`).join('; ')
            : null,
        finishedAt: clock.now(),
      };
    };
    const holdEnd = (outcomes: ItemOutcome[]) => {
      const ended = (end = endOf(outcomes));
      batch.later(() => jobRows.write(job.id, ended));
      return ended;
    };
    try {
      const startedAt = clock.now();
      batch.later(() => jobRows.write(job.id, { state: 'running', startedAt, attempts: job.attempts + 1 }));
      const params = stored.childParams(job);
      const bulkParams = running.get(params.bulkId) ?? bulkParamsOf(params.bulkId);
      const trigger = bulkParams?.trigger ?? { kind: 'request' as const, id: null };
      // Held as each item ends while others are still to come; once none is, the site's end (it commits with the last item's).
      const writeItems = (items: ItemOutcome[]) => {
        if (items.some((item) => item.state === 'pending')) {
          const progress = JSON.stringify({ items });
          batch.later(() => jobRows.write(job.id, { progress }));
        } else end ??= holdEnd(items);
      };
      // Bounded by the bulk update slot it holds, not again by the site task queue's bound (SITEWARDEN_SITE_CONCURRENCY).
      const outcomes = await underOwnBound(job.siteId!, () =>
        updateSite({
          siteId: job.siteId!,
          items: params.items,
          trigger,
          jobId: params.bulkId,
          safe: bulkParams?.safe ?? false,
          ...(bulkParams?.checks ? { checks: bulkParams.checks } : {}),
          onItem: writeItems,
          batch,
        }),
      );
      const { state, reason, progress } = end ?? holdEnd(outcomes);
      batch.commit();
      settle(job.id, { state, reason, progress });
    } catch (error) {
      logger.error({ err: error, jobId: job.id }, 'a site update crashed');
      jobRows.update(job.id, {
        state: 'failed',
        // (`stored-data-unreadable`: its params could not be read)
        reason: isAppError(error) ? error.problem.name : 'internal-error',
        message: String(error),
        finishedAt: clock.now(),
      });
    } finally {
      settle(job.id);
    }
    return { events: [] };
  }

  /** A bulk job's params read from its row (a child whose bulk job is not running in this process). */
  const bulkParamsOf = (bulkId: string): BulkParams | null => {
    const bulk = jobRows.find(bulkId);
    return bulk ? stored.bulkParams(bulk) : null;
  };

  /** In the background, never in the caller's way: a site that does not answer records its own sync failure. */
  const refreshSoon = (siteId: string) =>
    void Promise.resolve()
      .then(() => refreshInventory(siteId))
      .catch((error: unknown) => logger.warn({ err: error, siteId }, 'reading the inventory again failed'));

  /**
   * A site update the last process left running: each item that had not begun is skipped; one under way
   * as a safe update follows it (that safe update resumes after the restart: `followSafeUpdate`), its
   * history row now naming it; a plain one under way fails `interrupted` and the site's inventory is read
   * again, as it may or may not have the update.
   */
  function recoverChild(job: JobRow): Settlement {
    let params: ChildParams;
    let saved: StoppedItem[] | undefined;
    try {
      params = stored.childParams(job);
      saved = stored.childItems(job);
    } catch (error) {
      unreadable(job, error);
      return { events: [] };
    }
    const items: StoppedItem[] =
      saved ?? params.items.map((item) => ({ ...item, state: 'pending', reason: null, message: null }));
    const attempts = job.siteId ? repository.attemptsOf(params.bulkId, job.siteId) : [];
    const now = clock.now();
    let cutShort = false;
    for (const item of items) {
      if (item.state !== 'pending') continue;
      const attempt = attempts.find((row) => row.type === item.type && row.slug === item.slug);
      if (!attempt) {
        Object.assign(item, { state: 'skipped', reason: 'interrupted', message: STOPPED_BEFORE_ITEM });
        continue;
      }
      // Ended, and its end committed where the item's was not: the history row says how.
      if (attempt.result !== 'running') {
        Object.assign(item, { state: attempt.result, reason: attempt.reason, message: attempt.error });
        continue;
      }
      if (job.kind === SAFE_CHILD && item.type !== 'translations') {
        const safeUpdate = attempt.safeUpdateId
          ? repository.safeUpdate(attempt.safeUpdateId)
          : repository.safeUpdateStartedBy(attempt);
        if (!safeUpdate) {
          history.finish(attempt.id, {
            result: 'skipped',
            reason: 'interrupted',
            error: STOPPED_BEFORE_ITEM,
            finishedAt: now,
          });
          Object.assign(item, { state: 'skipped', reason: 'interrupted', message: STOPPED_BEFORE_ITEM });
          continue;
        }
        repository.linkSafeUpdate(attempt.id, safeUpdate.id);
        if (hasDecided(safeUpdate)) {
          history.finishSafeUpdate(safeUpdate.id, {
            ...attemptEndOf(safeUpdate),
            fromVersion: safeUpdate.fromVersion,
            finishedAt: now,
          });
          Object.assign(item, itemAfterSafeUpdate(item, safeUpdate));
        } else
          Object.assign(item, {
            reason: 'interrupted',
            message: STOPPED_DURING_SAFE_ITEM,
            safeUpdateId: safeUpdate.id,
          });
        continue;
      }
      history.finish(attempt.id, {
        result: 'failed',
        reason: 'interrupted',
        error: STOPPED_DURING_PLAIN,
        finishedAt: now,
      });
      Object.assign(item, { state: 'failed', reason: 'interrupted', message: STOPPED_DURING_PLAIN });
      cutShort = true;
    }
    jobRows.update(job.id, { ...siteAfterStop(items), progress: JSON.stringify({ items }), finishedAt: now });
    if (cutShort && job.siteId) refreshSoon(job.siteId);
    return { events: [] };
  }

  /**
   * A safe update a bulk item was following (the daemon stopped during it, and it resumed after the restart)
   * has decided: the item, its site and the run's counts follow. Anything else: nothing to do.
   */
  function followSafeUpdate(safeUpdate: SafeUpdateFacts): void {
    if (!hasDecided(safeUpdate)) return;
    const attempt = repository.bulkAttemptOf(safeUpdate.id);
    if (!attempt?.jobId) return;
    const child = repository.children(attempt.jobId).find((row) => row.siteId === attempt.siteId);
    if (!child || child.state === 'queued' || child.state === 'running') return;
    let items: StoppedItem[];
    try {
      items = stored.childItems(child) ?? [];
    } catch (error) {
      logger.warn(
        { err: error, jobId: child.id, safeUpdateId: safeUpdate.id },
        'a site update’s items could not be read',
      );
      return;
    }
    const at = items.findIndex((item) => item.safeUpdateId === safeUpdate.id && item.state === 'pending');
    if (at < 0) return;
    items[at] = itemAfterSafeUpdate(items[at]!, safeUpdate);
    jobRows.transaction(() => {
      jobRows.write(child.id, { ...siteAfterStop(items), progress: JSON.stringify({ items }) });
      jobRows.write(attempt.jobId!, { progress: JSON.stringify(progressOf(repository.children(attempt.jobId!))) });
    });
  }

  jobs.register(BULK, {
    pool: { name: 'bulk-updates', concurrency: BULK_JOBS_AT_ONCE },
    exclusive: false,
    atShutdown: 'abort',
    cancelsWhileRunning: true,
    run: runBulk,
    cancelQueued: (job, message) => {
      for (const child of repository.children(job.id))
        if (child.state === 'queued') leaveUnstarted(child, 'cancelled', message);
    },
    recover: {
      // Its site updates that had not started are not started now: what was asked may be stale.
      // Its running ones were recovered first (recover()): the counts include how they ended.
      running: (job) => {
        for (const child of repository.children(job.id))
          if (child.state === 'queued') leaveUnstarted(child, 'interrupted', INTERRUPTED);
        jobRows.update(job.id, {
          state: 'failed',
          reason: 'interrupted',
          message: STOPPED_DURING_RUN,
          progress: JSON.stringify(progressOf(repository.children(job.id))),
          finishedAt: clock.now(),
        });
        return { events: [] };
      },
    },
  });
  // A running site update finishes (WordPress's upgrader cannot stop halfway); its bulk job decides what starts.
  const childKind = {
    pool: { name: 'site-updates', concurrency: Number.MAX_SAFE_INTEGER },
    exclusive: true,
    atShutdown: 'grace',
    cancelsWhileRunning: false,
    run: runChild,
    // Started by its bulk job (it holds a slot): settled, which frees the slot; not yet: its bulk job drops it.
    cancelQueued: (job: JobRow) => {
      if (settled.has(job.id)) settle(job.id);
      else {
        // Unreadable, it was never queued by its bulk job (which failed it): nothing to drop.
        const bulkId = parseBulkIdOrNull(job);
        if (bulkId) droppers.get(bulkId)?.(job.id);
      }
    },
    recover: {
      running: recoverChild,
      // Its bulk job starts it (when requeued itself) or has already left it unstarted.
      queued: () => ({ events: [] }),
    },
  } satisfies JobKind;
  jobs.register(CHILD, childKind);
  jobs.register(SAFE_CHILD, { ...childKind, siteTurn: false });

  return {
    /** Queues a bulk update (or records a dry run); its job row. */
    start: (request: BulkUpdateRequest): JobRow => startBulkUpdate(request).job,
    /** `start`, answered with the run as just queued (or the dry run's plan). */
    apply(request: BulkUpdateRequest) {
      const { job, children } = startBulkUpdate(request);
      return runView.of(job, children);
    },
    /**
     * Applies a preview (a dry run) as it was planned, once: the run it starts is written on the preview in the same
     * transaction, so a second apply answers `preview-already-applied` naming it.
     */
    applyPreview(previewId: string, request: Pick<BulkUpdateRequest, 'trigger' | 'safe' | 'checks'>) {
      const { job, children } = jobRows.transaction(() => {
        const { progress, targets, checks } = previewToApply(jobRows.find(previewId), previewId);
        const started = startBulkUpdate({ ...request, checks: request.checks ?? checks, targets });
        jobRows.write(previewId, { progress: JSON.stringify({ ...progress, appliedAs: started.job.id }) });
        return started;
      });
      return runView.of(job, children);
    },
    /** The targets a request's selection names, from the inventory rows. */
    select: (input: BulkUpdateInput): BulkTarget[] => resolveSelection(repository, input),
    history: (filter: HistoryFilter) => history.list(filter),
    requireSite(siteId: string): void {
      if (repository.sites({ ids: [siteId] }).length === 0)
        throw sitesProblems.notFound.create(`there is no site with the id ${siteId}`);
    },

    /** The bulk job with each site's state and items. */
    run(id: string) {
      const job = jobRows.find(id);
      if (!job || job.kind !== BULK) throw bulkUpdatesProblems.notFound.create(`there is no bulk update ${id}`);
      return runView.of(job, repository.children(id));
    },

    /** The newest bulk updates (and previews), as summaries. */
    runs: (limit: number) => jobRows.list({ kind: BULK, limit }).map(runView.summary),

    /**
     * At start: the bulk updates the last process left (its site updates under way first: each item tells
     * what became of it, see `recoverChild`; then running bulk jobs fail as interrupted, their sites not
     * started skipped; queued ones run, from a later turn), then the other update attempts it left under way
     * end `failed` (`interrupted`) and their sites' inventories are read again, safe updates' excepted
     * (those resume and end their own). How many of those attempts were ended.
     */
    recover(): { attemptsEnded: number } {
      jobs.recover([CHILD, SAFE_CHILD, BULK]);
      const sites = repository.sitesWithAbandonedAttempts();
      const attemptsEnded = history.endAbandoned({
        reason: 'interrupted',
        error: STOPPED_DURING_PLAIN,
        finishedAt: clock.now(),
      });
      if (attemptsEnded > 0)
        logger.warn(
          { attempts: attemptsEnded },
          'update attempts the last process left under way were ended as interrupted',
        );
      for (const siteId of sites) refreshSoon(siteId);
      return { attemptsEnded };
    },
    /** A safe update decided (the update history's hook): a bulk item the daemon's stop left following it follows. */
    followSafeUpdate,
    stop: (graceMs: number) => jobs.stop(BULK_UPDATE_KINDS, { graceMs }),
    idle: () => jobs.idle(BULK_UPDATE_KINDS),
  };
}
