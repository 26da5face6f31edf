import type { Logger } from 'pino';
import { z } from 'zod';
import { wasCancelled, type Settlement } from '../jobs/job-kind.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { JobsRepository } from '../jobs/jobs.repository.js';
import { jobs as jobsTable, type JobRow } from '../jobs/jobs.table.js';
import { sql, type SQL } from 'drizzle-orm';
import { ActorSchema, type Actor, type SiteScope } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { isAppError, isProblem } from '../shared/errors.js';
import { createId } from '../shared/ids.js';
import { parseStored } from '../shared/stored-json.js';
import { sitesProblems, visibleSites, type SitesRepository } from '../sites/index.js';
import type { FleetRepository } from '../fleet/index.js';
import { fleetActionsProblems } from './fleet-actions.errors.js';
import {
  fleetActions,
  FleetActionSiteSchema,
  type FleetActionName,
  type FleetActionRequest,
  type FleetActionSite,
  type FleetActionView,
} from './fleet-actions.schemas.js';

const FLEET_ACTION = 'fleet-action';
const KINDS = [FLEET_ACTION] as const;
/** Fleet actions running at once; each works its sites through the site task queue, which bounds them all. */
const ACTIONS_AT_ONCE = 2;
/** A running action's stored results follow its sites at most this often (and when it ends). */
const PROGRESS_WRITE_MS = 1_000;
const MAX_SITES = 10_000;

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

/** What a fleet action's row holds in `params`, and in `progress`: each site's result. */
const ActionParams = z.object({
  action: z.enum(fleetActions),
  type: z.enum(['plugin', 'theme']),
  slug: z.string(),
  activate: z.boolean(),
  deactivate: z.boolean(),
  requestedBy: ActorSchema.nullable(),
});
type ActionParams = z.infer<typeof ActionParams>;
const ActionProgress = z.object({ sites: z.array(FleetActionSiteSchema) });
type ActionProgress = z.infer<typeof ActionProgress>;

const storedParams = (job: JobRow): ActionParams =>
  parseStored(ActionParams, job.params, `the params of fleet action ${job.id}`);
const storedProgress = (job: JobRow): ActionProgress =>
  parseStored(ActionProgress, job.progress, `the progress of fleet action ${job.id}`);

/**
 * The actions a request limited to tags may see (issue 33): those whose every site (its row's `progress.sites`,
 * written whole as it is queued) is in the scope. An action reaching outside it is not shown, not even in part:
 * it answers as an unknown action (a row whose progress is not JSON: hidden too, never a failed query). Undefined
 * for every site.
 */
function everySiteIn(scope: SiteScope | undefined): SQL | undefined {
  if (!scope || scope.kind === 'all') return undefined;
  const visible = visibleSites(scope, sql`json_extract(s.value, '$.siteId')`) ?? sql`1`;
  return sql`(case when json_valid(${jobsTable.progress})
    then exists (select 1 from json_each(${jobsTable.progress}, '$.sites'))
      and not exists (select 1 from json_each(${jobsTable.progress}, '$.sites') s where not (${visible}))
    else 0 end)`;
}

/** Which action a kind of item supports: a theme is not deactivated (another one is activated instead). */
const supported = (type: 'plugin' | 'theme', action: FleetActionName) => type === 'plugin' || action !== 'deactivate';

/**
 * Install, activate, deactivate or remove one plugin (or install, activate or remove a theme) across a selection of sites: a
 * `fleet-action` job whose row holds what was asked, who asked, and each site's result. Each
 * site goes through the single-site plugin and theme services (so through the site task queue:
 * one operation per site at a time, the global site bound); one site's failure never stops the others.
 */
export function createFleetActions({
  jobs,
  jobRows,
  sites,
  fleet,
  plugins,
  themes,
  clock,
  logger,
  concurrency,
}: {
  jobs: JobRunner;
  jobRows: JobsRepository;
  sites: Pick<SitesRepository, 'findById' | 'connectedIds'>;
  fleet: Pick<FleetRepository, 'sitesWith'>;
  plugins: SinglePluginOperations;
  themes: SingleThemeOperations;
  clock: Clock;
  logger: Logger;
  /** Sites one action works on at once (the site task queue still bounds them all together). */
  concurrency: number;
}) {
  /** The site ids a request selects, in id order. */
  function select(input: FleetActionRequest): string[] {
    const ways = [input.sites !== undefined, input.tag.length > 0, input.all === true].filter(Boolean).length;
    if (ways !== 1) throw fleetActionsProblems.selection.create('give `sites`, `tag` or `all: true`, and only one');
    if (input.sites) {
      const ids = [...new Set(input.sites)].sort();
      const unknown = ids.filter((id) => sites.findById(id) === undefined);
      if (unknown.length > 0)
        throw sitesProblems.notFound.create(`there is no site with the id ${unknown.slice(0, 10).join(', ')}`, {
          siteIds: unknown.slice(0, 100),
        });
      return ids;
    }
    const connected = sites.connectedIds(input.all ? {} : { tag: input.tag });
    if (input.action === 'install') return connected;
    // Any other action: the sites whose last sync lists the item.
    const having = new Set(
      fleet.sitesWith({ type: input.type, slug: input.slug, tags: [], limit: MAX_SITES * 10 }).map((row) => row.siteId),
    );
    return connected.filter((id) => having.has(id));
  }

  function start(input: FleetActionRequest, requestedBy: Actor | null): FleetActionView {
    if (!supported(input.type, input.action))
      throw fleetActionsProblems.unsupported.create('a theme is not deactivated: activate another theme instead', {
        action: input.action,
        itemType: input.type,
      });
    const ids = select(input);
    if (ids.length === 0)
      throw fleetActionsProblems.noSites.create(
        input.action === 'install'
          ? 'no connected site is selected'
          : `no selected connected site has the ${input.type} ${input.slug} (as of its last sync)`,
        { action: input.action, slug: input.slug },
      );
    if (ids.length > MAX_SITES)
      throw fleetActionsProblems.selection.create(`select at most ${MAX_SITES} sites at once`, { sites: ids.length });
    const now = clock.now();
    const params: ActionParams = {
      action: input.action,
      type: input.type,
      slug: input.slug,
      activate: input.activate === true,
      deactivate: input.deactivate === true,
      requestedBy,
    };
    const results: FleetActionSite[] = ids.map((siteId) => {
      const site = sites.findById(siteId);
      const connected = site?.state === 'connected';
      return {
        siteId,
        url: site?.url ?? '',
        state: connected ? 'queued' : 'skipped',
        reason: connected ? null : 'site-not-connected',
        message: connected ? null : `the site is ${site?.state ?? 'gone'}`,
        version: null,
        status: null,
        finishedAt: connected ? null : now.toISOString(),
      };
    });
    const id = createId('fact', now);
    const job = jobRows.insert({
      id,
      kind: FLEET_ACTION,
      siteId: null,
      state: 'queued',
      params: JSON.stringify(params),
      progress: JSON.stringify({ sites: results } satisfies ActionProgress),
      createdAt: now,
    });
    logger.info(
      { jobId: id, action: input.action, type: input.type, slug: input.slug, sites: ids.length, requestedBy },
      'fleet action queued',
    );
    jobs.enqueue(FLEET_ACTION, id, null);
    return view(job);
  }

  /** One site's turn: the single-site service's call, its answer or problem as the site's result. */
  async function actOn(params: ActionParams, entry: FleetActionSite): Promise<void> {
    const { action, type, slug } = params;
    const site = sites.findById(entry.siteId);
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

  async function run(job: JobRow, signal: AbortSignal): Promise<Settlement> {
    jobRows.write(job.id, { state: 'running', startedAt: clock.now(), attempts: job.attempts + 1 });
    let params: ActionParams;
    let progress: ActionProgress;
    try {
      params = storedParams(job);
      progress = storedProgress(job);
    } catch (error) {
      // What was asked cannot be known: the action fails (`stored-data-unreadable`), no site is touched.
      if (!isAppError(error)) throw error;
      logger.error({ err: error, jobId: job.id }, 'a fleet action’s stored data could not be read');
      jobRows.write(job.id, {
        state: 'failed',
        reason: error.problem.name,
        message: error.detail,
        finishedAt: clock.now(),
      });
      return { events: [] };
    }
    const waiting = progress.sites.filter((entry) => entry.state === 'queued' || entry.state === 'running');
    let writtenAt = Date.now();
    const write = (force = false) => {
      if (!force && Date.now() - writtenAt < PROGRESS_WRITE_MS) return;
      jobRows.write(job.id, { progress: JSON.stringify(progress) });
      writtenAt = Date.now();
    };
    let next = 0;
    const worker = async () => {
      while (next < waiting.length && !signal.aborted) {
        const entry = waiting[next++]!;
        entry.state = 'running';
        await actOn(params, entry);
        write();
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
    jobRows.write(job.id, {
      state,
      reason: cancelled ? 'cancelled' : signal.aborted ? 'interrupted' : failed > 0 ? 'sites-failed' : null,
      message: failed > 0 ? `${failed} of ${progress.sites.length} sites failed` : null,
      progress: JSON.stringify(progress),
      finishedAt: clock.now(),
    });
    logger.info(
      { jobId: job.id, action: params.action, slug: params.slug, state, failed, requestedBy: params.requestedBy },
      'fleet action finished',
    );
    return { events: [], interrupted: signal.aborted && !cancelled };
  }

  /** Marks the sites a stopped or cancelled action never reached. */
  const leaveUnstarted = (job: JobRow, reason: string, message: string, state: 'cancelled' | 'failed') => {
    let progress: ActionProgress;
    try {
      progress = storedProgress(job);
    } catch (error) {
      // Its sites cannot be listed: the action alone says how it ended (never a crash of start-up recovery).
      logger.error({ err: error, jobId: job.id }, 'a fleet action’s stored data could not be read');
      jobRows.update(job.id, { state, reason, message, finishedAt: clock.now() });
      return;
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
    jobRows.update(job.id, {
      state,
      reason,
      message,
      progress: JSON.stringify(progress),
      finishedAt: clock.now(),
    });
  };

  jobs.register(FLEET_ACTION, {
    pool: { name: 'fleet-actions', concurrency: ACTIONS_AT_ONCE },
    exclusive: false,
    // At a stop no further site starts; the sites under way finish as the site task queue's work does.
    atShutdown: 'abort',
    cancelsWhileRunning: true,
    run,
    cancelQueued: (job, message) => leaveUnstarted(job, 'cancelled', message, 'cancelled'),
    recover: {
      running: (job) => {
        leaveUnstarted(job, 'interrupted', 'the daemon stopped before this site’s turn', 'failed');
        return { events: [] };
      },
    },
  });

  function view(job: JobRow): FleetActionView {
    const params = storedParams(job);
    const { sites: results } = storedProgress(job);
    const counts = { total: results.length, done: 0, succeeded: 0, failed: 0, skipped: 0 };
    for (const entry of results) {
      if (entry.state === 'queued' || entry.state === 'running') continue;
      counts.done++;
      counts[entry.state]++;
    }
    return {
      id: job.id,
      state: job.state,
      reason: job.reason,
      message: job.message,
      action: params.action,
      type: params.type,
      slug: params.slug,
      requestedBy: params.requestedBy,
      counts,
      sites: results,
      job: `/api/jobs/${job.id}`,
      createdAt: job.createdAt.toISOString(),
      startedAt: job.startedAt?.toISOString() ?? null,
      finishedAt: job.finishedAt?.toISOString() ?? null,
    };
  }

  return {
    /** Queues the action; 202's answer. */
    start,
    /** One action; outside a request's `scope` (one of its sites is), as an unknown id. */
    get(id: string, scope?: SiteScope): FleetActionView {
      const visible = everySiteIn(scope);
      const job = visible ? jobRows.list({ id, kind: FLEET_ACTION, visible, limit: 1 })[0] : jobRows.find(id);
      if (!job || job.kind !== FLEET_ACTION)
        throw fleetActionsProblems.notFound.create(`there is no fleet action ${id}`);
      return view(job);
    },
    /** The newest fleet actions (of a request's `scope`: those whose every site it includes). */
    list: (limit: number, scope?: SiteScope): FleetActionView[] =>
      jobRows.list({ kind: FLEET_ACTION, limit, visible: everySiteIn(scope) }).map(view),
    /** At start: a running action the last process left fails as interrupted; a queued one runs. */
    recover: () => jobs.recover(KINDS),
    stop: (graceMs: number) => jobs.stop(KINDS, { graceMs }),
    idle: () => jobs.idle(KINDS),
  };
}

export type FleetActions = ReturnType<typeof createFleetActions>;
