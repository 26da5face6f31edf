import type { Logger } from 'pino';
import type { JobRunner } from '../jobs/job-runner.js';
import type { JobStore } from '../jobs/job-store.js';
import type { Actor, SiteScope } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import type { SitesRepository } from '../sites/index.js';
import type { FleetRepository } from '../fleet/index.js';
import { fleetActionsProblems } from './fleet-actions.errors.js';
import {
  registerFleetActionKind,
  type SinglePluginOperations,
  type SingleThemeOperations,
} from './fleet-actions.job.js';
import { createFleetActionPlanner } from './fleet-actions.plan.js';
import type { FleetActionRequest, FleetActionView } from './fleet-actions.schemas.js';
import { everySiteIn, FLEET_ACTION, view } from './fleet-actions.stored.js';

const KINDS = [FLEET_ACTION] as const;

/**
 * Install, activate, deactivate or remove one plugin (or install, activate or remove a theme) across a
 * selection of sites: a `fleet-action` job whose row holds what was asked, who asked, and each site's
 * result. The request is checked and planned in fleet-actions.plan.ts, the job kind that works the sites
 * is fleet-actions.job.ts (the job runner writes its row), and the row reads as the API's view in
 * fleet-actions.stored.ts.
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
  /** Reads for the views; the runner writes the rows (but the sites a cancel while queued left unreached). */
  jobRows: Pick<JobStore, 'find' | 'list'>;
  sites: Pick<SitesRepository, 'statesOf' | 'connectedIds' | 'findById'>;
  fleet: Pick<FleetRepository, 'sitesWith'>;
  plugins: SinglePluginOperations;
  themes: SingleThemeOperations;
  clock: Clock;
  logger: Logger;
  /** Sites one action works on at once (the site task queue still bounds them all together). */
  concurrency: number;
}) {
  const plan = createFleetActionPlanner({ sites, fleet, clock });
  registerFleetActionKind({ jobs, sites, plugins, themes, clock, logger, concurrency });

  async function start(input: FleetActionRequest, requestedBy: Actor | null): Promise<FleetActionView> {
    const planned = await plan(input, requestedBy);
    const { job } = await jobs.submit(planned);
    logger.info(
      {
        jobId: job.id,
        action: input.action,
        type: input.type,
        slug: input.slug,
        sites: planned.progress.sites.length,
        requestedBy,
      },
      'fleet action queued',
    );
    return view(job);
  }

  return {
    /** Queues the action; 202's answer. */
    start,
    /** One action; outside a request's `scope` (one of its sites is), as an unknown id. */
    async get(id: string, scope?: SiteScope): Promise<FleetActionView> {
      const visible = everySiteIn(scope);
      const job = visible
        ? (await jobRows.list({ id, kind: FLEET_ACTION, visible, limit: 1 }))[0]
        : await jobRows.find(id);
      if (!job || job.kind !== FLEET_ACTION)
        throw fleetActionsProblems.notFound.create(`there is no fleet action ${id}`);
      return view(job);
    },
    /** The newest fleet actions (of a request's `scope`: those whose every site it includes). */
    list: async (limit: number, scope?: SiteScope): Promise<FleetActionView[]> =>
      (await jobRows.list({ kind: FLEET_ACTION, limit, visible: everySiteIn(scope) })).map(view),
    /** At start: a running action the last process left fails as interrupted; a queued one runs. */
    recover: () => jobs.recover(KINDS),
    stop: (graceMs: number) => jobs.stop(KINDS, { graceMs }),
    idle: () => jobs.idle(KINDS),
  };
}

export type FleetActions = ReturnType<typeof createFleetActions>;
