import { sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { jobs as jobsTable, type JobRow } from '../jobs/jobs.table.js';
import { ActorSchema, type SiteScope } from '../shared/actor.js';
import { parseStored } from '../shared/stored-json.js';
import { visibleSites } from '../sites/index.js';
import { fleetActions, FleetActionSiteSchema, type FleetActionView } from './fleet-actions.schemas.js';

/** What a fleet action is stored as: its job row (kind `fleet-action`, no site), and how that row reads as the API's view. */
export const FLEET_ACTION = 'fleet-action';

/** What a fleet action's row holds in `params`, and in `progress`: each site's result. */
const ActionParams = z.object({
  action: z.enum(fleetActions),
  type: z.enum(['plugin', 'theme']),
  slug: z.string(),
  activate: z.boolean(),
  deactivate: z.boolean(),
  requestedBy: ActorSchema.nullable(),
});
export type ActionParams = z.infer<typeof ActionParams>;
const ActionProgress = z.object({ sites: z.array(FleetActionSiteSchema) });
export type ActionProgress = z.infer<typeof ActionProgress>;

export const storedParams = (job: JobRow): ActionParams =>
  parseStored(ActionParams, job.params, `the params of fleet action ${job.id}`);
export const storedProgress = (job: JobRow): ActionProgress =>
  parseStored(ActionProgress, job.progress, `the progress of fleet action ${job.id}`);

/**
 * The actions a request limited to tags may see (issue 33): those whose every site (its row's `progress.sites`,
 * written whole as it is queued) is in the scope. An action reaching outside it is not shown, not even in part:
 * it answers as an unknown action (a row whose progress is not JSON: hidden too, never a failed query). Undefined
 * for every site.
 */
export function everySiteIn(scope: SiteScope | undefined): SQL | undefined {
  if (!scope || scope.kind === 'all') return undefined;
  const visible = visibleSites(scope, sql`json_extract(s.value, '$.siteId')`) ?? sql`1`;
  return sql`(case when json_valid(${jobsTable.progress})
    then exists (select 1 from json_each(${jobsTable.progress}, '$.sites'))
      and not exists (select 1 from json_each(${jobsTable.progress}, '$.sites') s where not (${visible}))
    else 0 end)`;
}

/** A fleet action's job row as the API and the dashboard show it. */
export function view(job: JobRow): FleetActionView {
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
