import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { decodeCursor, pageSchema, toPage } from '../http/pagination.js';
import type { SiteScope } from '../shared/actor.js';
import { SiteIdPathParam, type SitesService } from '../sites/index.js';
import { bulkUpdatesProblems } from './bulk-updates.errors.js';
import {
  ApplyPreviewInput,
  BulkRunParams,
  BulkUpdateInput,
  BulkUpdateRunSchema,
  FleetHistoryQuery,
  HistoryEntryParams,
  HistoryEntrySchema,
  HistoryRollbackSchema,
  SiteHistoryQuery,
} from './bulk-updates.schemas.js';
import type { BulkUpdatesService } from './bulk-updates.js';
import { restorePointOf, type HistoryFilter, type UpdateHistoryRow } from '../update-history/index.js';

const tags = ['Fleet'];

const applyUpdates = createRoute({
  method: 'post',
  path: '/fleet/updates/apply',
  operationId: 'applyFleetUpdates',
  tags,
  summary: 'Apply updates across the fleet (a bulk update)',
  description:
    'Resolves the selection (exactly one of `sites`, `tag`, `all: true`; `items`, by default every pending plugin and theme update; `exclude`) against each site’s last synced inventory and queues one `bulk-update` job with one `site-update` child per site (202). Sites run with bounded concurrency (`SITEWARDEN_BULK_UPDATE_CONCURRENCY`, not bounded again by `SITEWARDEN_SITE_CONCURRENCY`, and `SITEWARDEN_BULK_UPDATE_PER_HOST` per host); one site’s failure never stops the others. Each site applies plugins, themes, translations, then core. `dryRun: true` answers the plan (200) and changes nothing; apply it once with `POST /api/fleet/updates/runs/{jobId}/apply`. Cancel with `POST /api/jobs/{jobId}/cancel` (the bulk job, or one queued site’s job).',
  request: { body: { content: { 'application/json': { schema: BulkUpdateInput } }, required: true } },
  responses: {
    200: jsonContent(BulkUpdateRunSchema, 'The plan of a dry run'),
    202: jsonContent(BulkUpdateRunSchema, 'Queued'),
    ...problemResponses(400, 403, 404, 415, 422),
  },
});

const getRun = createRoute({
  method: 'get',
  path: '/fleet/updates/runs/{jobId}',
  operationId: 'getFleetUpdateRun',
  tags,
  summary: 'A bulk update’s progress',
  description: '`done` of `total` sites, each site’s state and each item’s from → to, result and error.',
  request: { params: BulkRunParams },
  responses: { 200: jsonContent(BulkUpdateRunSchema, 'The bulk update'), ...problemResponses(404) },
});

const applyPreview = createRoute({
  method: 'post',
  path: '/fleet/updates/runs/{jobId}/apply',
  operationId: 'applyFleetUpdatePreview',
  tags,
  summary: 'Apply a preview (a dry run) as planned',
  description:
    'Queues a bulk update of exactly the preview’s plan, each item at the version the preview showed (202, as `POST /api/fleet/updates/apply`). A preview is applied once: the preview’s `appliedAs` names the run, and another apply of it answers 409 `preview-already-applied` with that run’s id in `runId`. A bulk update that is not a preview answers 409 `bulk-update-not-a-preview`.',
  request: {
    params: BulkRunParams,
    body: { content: { 'application/json': { schema: ApplyPreviewInput } }, required: false },
  },
  responses: { 202: jsonContent(BulkUpdateRunSchema, 'Queued'), ...problemResponses(400, 403, 404, 409, 415, 422) },
});

const HistoryPage = pageSchema(HistoryEntrySchema, 'UpdateHistoryPage');
const HISTORY_DESCRIPTION =
  'One entry per attempt to update an item (plugin, theme, core, translations), newest first, from single-site requests, bulk updates and policies: from → to, when, who asked, result and error.';

const siteHistory = createRoute({
  method: 'get',
  path: '/sites/{siteId}/updates/history',
  operationId: 'listSiteUpdateHistory',
  tags: ['Sites'],
  summary: 'A site’s update history',
  description: HISTORY_DESCRIPTION,
  request: { params: SiteIdPathParam, query: SiteHistoryQuery },
  responses: { 200: jsonContent(HistoryPage, 'A page of attempts'), ...problemResponses(400, 404) },
});

const fleetHistory = createRoute({
  method: 'get',
  path: '/fleet/updates/history',
  operationId: 'listFleetUpdateHistory',
  tags,
  summary: 'Update history across the fleet',
  description: `${HISTORY_DESCRIPTION} Filterable by site, tag, type, slug, result, who asked (triggerKind, triggerId), since and until.`,
  request: { query: FleetHistoryQuery },
  responses: { 200: jsonContent(HistoryPage, 'A page of attempts'), ...problemResponses(400) },
});

const rollBackEntry = createRoute({
  method: 'post',
  path: '/sites/{siteId}/updates/history/{entryId}/rollback',
  operationId: 'rollBackUpdate',
  tags: ['Sites'],
  summary: 'Roll back a plain plugin or theme update',
  description:
    'Puts back the restore point the update took before it (`restorePoint`: a copy of the plugin’s or theme’s folder; for core, of `wp-admin`, `wp-includes` and the root PHP files) through the site’s standalone rollback path, which works when every WordPress request ends in a fatal error. Answers when it is back (200) with the entry and the rollback’s own history entry (`rollbackOf`, who asked); emits `update.rolled-back`, so update policies hold the version rolled back from. 404 `update-history-entry-not-found`; 409 `no-restore-point` (a safe update, translations, or a site whose connector could not take one), `update-still-running`, or `already-rolled-back` (`rollbackId`); 422 `rollback-path-unavailable`; 502 `restore-point-not-restored` when the path refused.',
  request: { params: HistoryEntryParams },
  responses: {
    200: jsonContent(HistoryRollbackSchema, 'Rolled back'),
    ...problemResponses(403, 404, 409, 422, 502, 504),
  },
});

/** The query's times as dates. */
const historyFilter = <F extends { since?: string; until?: string }>({ since, until, ...rest }: F) => ({
  ...rest,
  since: since ? new Date(since) : undefined,
  until: until ? new Date(until) : undefined,
});

const entryView = (row: UpdateHistoryRow) => ({
  id: row.id,
  siteId: row.siteId,
  type: row.type,
  slug: row.slug,
  fromVersion: row.fromVersion,
  toVersion: row.toVersion,
  startedAt: row.startedAt.toISOString(),
  finishedAt: row.finishedAt?.toISOString() ?? null,
  trigger: { kind: row.triggerKind, id: row.triggerId },
  jobId: row.jobId,
  safeUpdateId: row.safeUpdateId,
  restorePoint: restorePointOf(row),
  rollbackOf: row.rollbackOf,
  result: row.result,
  reason: row.reason,
  error: row.error,
});

/** Whether a site is in a scope (the sites service's check: it throws `site-not-found` outside). */
export type SiteVisibility = Pick<SitesService, 'checkVisible'>;

/**
 * A bulk run as a request limited to tags may see it (issue 33): shown when every one of its sites is in
 * the scope, else answered exactly as an unknown run (404 `bulk-update-not-found`). A run's plan and results
 * name its sites and the run is one thing (cancelled, applied as a whole), so one reaching outside the scope
 * is not shown in part. The run's sites are checked one by one (a point query each): only scoped requests pay.
 */
export async function runWithinScope<R extends { job: { id: string }; sites: readonly { siteId: string }[] }>(
  run: R,
  scope: SiteScope,
  sites: SiteVisibility,
): Promise<R> {
  if (scope.kind === 'all') return run;
  const visible = async (siteId: string) => {
    try {
      await sites.checkVisible(siteId, scope);
      return true;
    } catch {
      return false;
    }
  };
  const ids = new Set(run.sites.map((site) => site.siteId));
  if (ids.size === 0 || !(await Promise.all([...ids].map(visible))).every(Boolean))
    throw bulkUpdatesProblems.notFound.create(`there is no bulk update ${run.job.id}`);
  return run;
}

/** POST /api/fleet/updates/apply, GET …/runs/{id}, and the update history of a site and of the fleet. */
export function createBulkUpdatesRoutes({
  bulkUpdates,
  sites,
}: {
  bulkUpdates: BulkUpdatesService;
  sites: SiteVisibility;
}) {
  const page = async (filter: Omit<HistoryFilter, 'before' | 'limit'>, limit: number, cursor: string | undefined) => {
    const rows = await bulkUpdates.history({ ...filter, before: decodeCursor(cursor), limit: limit + 1 });
    const { items, nextCursor } = toPage(rows, limit);
    return { items: items.map(entryView), nextCursor };
  };
  return new OpenAPIHono<AppEnv>()
    .openapi(applyUpdates, async (c) => {
      const input = c.req.valid('json');
      const run = await bulkUpdates.apply({
        targets: await bulkUpdates.select(input),
        trigger: { kind: 'request', id: c.get('token').id },
        dryRun: input.dryRun,
        safe: input.safe,
        checks: input.checks,
        notAfter: input.notAfter ? new Date(input.notAfter) : undefined,
      });
      return input.dryRun ? c.json(run, 200) : c.json(run, 202);
    })
    .openapi(getRun, async (c) =>
      c.json(
        await runWithinScope(await bulkUpdates.run(c.req.valid('param').jobId), c.get('access').sites, sites),
        200,
      ),
    )
    .openapi(applyPreview, async (c) => {
      const run = await bulkUpdates.applyPreview(c.req.valid('param').jobId, {
        trigger: { kind: 'request', id: c.get('token').id },
        safe: c.req.valid('json').safe,
        checks: c.req.valid('json').checks,
      });
      return c.json(run, 202);
    })
    .openapi(siteHistory, async (c) => {
      const { siteId } = c.req.valid('param');
      await bulkUpdates.requireSite(siteId);
      const { limit, cursor, ...filter } = c.req.valid('query');
      return c.json(await page({ ...historyFilter(filter), siteId, scope: c.get('access').sites }, limit, cursor), 200);
    })
    .openapi(rollBackEntry, async (c) => {
      const { siteId, entryId } = c.req.valid('param');
      await bulkUpdates.requireSite(siteId);
      const { entry, rollback } = await bulkUpdates.rollBackEntry(siteId, entryId, c.get('actor'));
      return c.json({ entry: entryView(entry), rollback: entryView(rollback) }, 200);
    })
    .openapi(fleetHistory, async (c) => {
      const { limit, cursor, tag, ...filter } = c.req.valid('query');
      // Site scopes (issue 33): the entries of the sites the request may see.
      return c.json(
        await page({ ...historyFilter(filter), tags: tag, scope: c.get('access').sites }, limit, cursor),
        200,
      );
    });
}
