import type { Logger } from 'pino';
import { wasCancelled, type JobContext, type Settlement } from '../jobs/job-kind.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { JobRow } from '../jobs/jobs.table.js';
import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { isAppError, isProblem } from '../shared/errors.js';
import { sitesProblems, type SitesRepository } from '../sites/index.js';
import type { FleetActionSite } from './fleet-actions.schemas.js';
import {
  FLEET_ACTION,
  storedParams,
  storedProgress,
  type ActionParams,
  type ActionProgress,
} from './fleet-actions.stored.js';

/** Fleet actions running at once; each works its sites through the site task queue, which bounds them all. */
const ACTIONS_AT_ONCE = 2;
/** A running action's stored results follow its sites at most this often (and when it ends). */
const PROGRESS_WRITE_MS = 1_000;

/** What an action needs of a plugin or theme on a site: the single-site services (plugins/, themes/) as services.ts built them. */
interface ItemOnSite {
  version: string;
  status: string;
}
export interface SinglePluginOperations {
  install(siteId: string, slug: string, options: { activate?: boolean }): Promise<ItemOnSite>;
  activate(siteId: string, slug: string): Promise<ItemOnSite>;
  deactivate(siteId: string, slug: string): Promise<ItemOnSite>;
  remove(siteId: string, slug: string): Promise<void>;
}
export interface SingleThemeOperations {
  install(siteId: string, slug: string, options: { activate?: boolean; requestedBy?: Actor }): Promise<ItemOnSite>;
  activate(siteId: string, slug: string): Promise<ItemOnSite>;
  remove(siteId: string, slug: string): Promise<void>;
}

/** The single-site services' problems that mean "already as asked" (by name: those features' doors do not export them). */
const ALREADY_INSTALLED = new Set(['plugin-already-installed', 'theme-already-installed']);
const NOT_INSTALLED = new Set(['plugin-not-found', 'theme-not-found']);

/**
 * The `fleet-action` job kind: each site through the single-site plugin and theme services (so
 * through the site task queue: one operation per site at a time, the global site bound); one
 * site's failure never stops the others. The runner writes its job row: the
 * kind reports each site's result as progress and returns how the action ended.
 */
export function registerFleetActionKind({
  jobs,
  sites,
  plugins,
  themes,
  clock,
  logger,
  concurrency,
}: {
  jobs: Pick<JobRunner, 'register'>;
  sites: Pick<SitesRepository, 'findById'>;
  plugins: SinglePluginOperations;
  themes: SingleThemeOperations;
  clock: Clock;
  logger: Logger;
  concurrency: number;
}): void {
  /** One site's turn: the single-site service's call, its answer or problem as the site's result. */
  async function actOn(params: ActionParams, entry: FleetActionSite): Promise<void> {
    const { action, type, slug } = params;
    const site = await sites.findById(entry.siteId);
    const done = (state: FleetActionSite['state'], fields: Partial<FleetActionSite> = {}) =>
      Object.assign(entry, { state, reason: null, message: null, ...fields, finishedAt: clock.now().toISOString() });
    if (!site) return void done('skipped', { reason: 'site-not-found', message: 'the site was removed' });
    if (site.state !== 'connected')
      return void done('skipped', { reason: 'site-not-connected', message: `the site is ${site.state}` });
    try {
      if (type === 'theme') {
        if (action === 'install') {
          const theme = await themes.install(site.id, slug, {
            activate: params.activate,
            ...(params.requestedBy ? { requestedBy: params.requestedBy } : {}),
          });
          return void done('succeeded', { version: theme.version, status: theme.status });
        }
        if (action === 'activate') {
          const theme = await themes.activate(site.id, slug);
          return void done('succeeded', { version: theme.version, status: theme.status });
        }
        await themes.remove(site.id, slug);
        return void done('succeeded', { status: 'deleted' });
      }
      if (action === 'install') {
        const plugin = await plugins.install(site.id, slug, { activate: params.activate });
        return void done('succeeded', { version: plugin.version, status: plugin.status });
      }
      if (action === 'activate' || action === 'deactivate') {
        const plugin = await plugins[action](site.id, slug);
        return void done('succeeded', { version: plugin.version, status: plugin.status });
      }
      if (params.deactivate) await plugins.deactivate(site.id, slug);
      await plugins.remove(site.id, slug);
      return void done('succeeded', { status: 'deleted' });
    } catch (error) {
      if (!isAppError(error)) {
        logger.error({ err: error, siteId: site.id, action, slug }, 'a fleet action failed on a site');
        return void done('failed', { reason: 'internal-error', message: 'an internal error; see the daemon’s log' });
      }
      // Already as asked: nothing to do on this site.
      const nothingToDo =
        (action === 'install' && ALREADY_INSTALLED.has(error.problem.name)) ||
        (action === 'remove' && NOT_INSTALLED.has(error.problem.name)) ||
        isProblem(error, sitesProblems.notConnected);
      // Installed, not activated (a plugin's required plugins are missing, a theme WordPress refuses): the problem says so.
      const installedOnly = action === 'install' && error.extensions.installed === true;
      done(nothingToDo ? 'skipped' : 'failed', {
        reason: error.problem.name,
        message: error.detail,
        ...(installedOnly ? { status: 'inactive' } : {}),
      });
    }
  }

  /** Works the action's sites; the runner wrote its row `running`, writes each result as reported, then the outcome. */
  async function run(job: JobRow, signal: AbortSignal, context: JobContext): Promise<Settlement> {
    let params: ActionParams;
    let progress: ActionProgress;
    try {
      params = storedParams(job);
      progress = storedProgress(job);
    } catch (error) {
      // What was asked cannot be known: the action fails (`stored-data-unreadable`), no site is touched.
      if (!isAppError(error)) throw error;
      logger.error({ err: error, jobId: job.id }, 'a fleet action’s stored data could not be read');
      return { events: [], outcome: { state: 'failed', reason: error.problem.name, message: error.detail } };
    }
    const waiting = progress.sites.filter((entry) => entry.state === 'queued' || entry.state === 'running');
    let writtenAt = Date.now();
    const report = () => {
      if (Date.now() - writtenAt < PROGRESS_WRITE_MS) return;
      context.progress(progress);
      writtenAt = Date.now();
    };
    let next = 0;
    const worker = async () => {
      while (next < waiting.length && !signal.aborted) {
        const entry = waiting[next++]!;
        entry.state = 'running';
        await actOn(params, entry);
        report();
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, waiting.length)) }, worker));
    const cancelled = wasCancelled(signal);
    for (const entry of waiting)
      if (entry.state === 'queued' || entry.state === 'running')
        Object.assign(entry, {
          state: 'skipped',
          reason: cancelled ? 'cancelled' : 'interrupted',
          message: cancelled ? 'cancelled before this site’s turn' : 'the daemon stopped before this site’s turn',
          finishedAt: clock.now().toISOString(),
        });
    const failed = progress.sites.filter((entry) => entry.state === 'failed').length;
    const state = cancelled ? 'cancelled' : signal.aborted || failed > 0 ? 'failed' : 'succeeded';
    logger.info(
      { jobId: job.id, action: params.action, slug: params.slug, state, failed, requestedBy: params.requestedBy },
      'fleet action finished',
    );
    return {
      events: [],
      interrupted: signal.aborted && !cancelled,
      outcome: {
        state,
        reason: cancelled ? 'cancelled' : signal.aborted ? 'interrupted' : failed > 0 ? 'sites-failed' : null,
        message: failed > 0 ? `${failed} of ${progress.sites.length} sites failed` : null,
        progress,
      },
    };
  }

  /** The action's results with the sites a stopped or cancelled action never reached marked so; undefined when unreadable. */
  function unreached(job: JobRow, reason: string, message: string): ActionProgress | undefined {
    let progress: ActionProgress;
    try {
      progress = storedProgress(job);
    } catch (error) {
      // Its sites cannot be listed: the action alone says how it ended (never a crash of start-up recovery).
      logger.error({ err: error, jobId: job.id }, 'a fleet action’s stored data could not be read');
      return undefined;
    }
    for (const entry of progress.sites)
      if (entry.state === 'queued' || entry.state === 'running')
        Object.assign(entry, {
          state: entry.state === 'running' ? 'failed' : 'skipped',
          reason,
          message:
            entry.state === 'running'
              ? 'the daemon stopped while this site was worked on; its next sync shows the result'
              : message,
          finishedAt: clock.now().toISOString(),
        });
    return progress;
  }

  jobs.register(FLEET_ACTION, {
    pool: { name: 'fleet-actions', concurrency: ACTIONS_AT_ONCE },
    exclusive: false,
    // At a stop no further site starts; the sites under way finish as the site task queue's work does.
    atShutdown: 'abort',
    cancelsWhileRunning: true,
    run,
    // The sites' results live in the job's progress: each site cancelled, written by the runner.
    cancelQueued: (job, message) => {
      const progress = unreached(job, 'cancelled', message);
      return progress ? { progress } : undefined;
    },
    recover: {
      running(job) {
        const message = 'the daemon stopped before this site’s turn';
        const progress = unreached(job, 'interrupted', message);
        return {
          events: [],
          outcome: { state: 'failed', reason: 'interrupted', message, ...(progress ? { progress } : {}) },
        };
      },
    },
  });
}
