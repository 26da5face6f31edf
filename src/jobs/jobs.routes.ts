import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import { sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { decodeCursor, pageSchema, toPage } from '../http/pagination.js';
import type { SiteScope } from '../shared/actor.js';
import type { JobRunner } from './job-runner.js';
import { jobsProblems } from './jobs.errors.js';
import { jobs as jobsTable } from './jobs.table.js';
import { JobListQuery, JobParams, JobSchema, jobView } from './jobs.schemas.js';

const tags = ['Jobs'];
/** The cursor is the last job's creation time and id: jobs of different kinds do not sort by id. */
const CURSOR_KEY = /^\d{1,15}~[A-Za-z0-9_-]{1,64}$/;

const routes = {
  list: createRoute({
    method: 'get',
    path: '/jobs',
    operationId: 'listJobs',
    tags,
    summary: 'Long-running work of every kind',
    description:
      'Every long piece of work (backups, restores, verifies, audits, bulk and safe updates, fleet actions, prunes) as jobs, newest first, filterable by site, kind and state: one place to follow any long work.',
    request: { query: JobListQuery },
    responses: { 200: jsonContent(pageSchema(JobSchema, 'JobPage'), 'A page of jobs'), ...problemResponses(400) },
  }),
  get: createRoute({
    method: 'get',
    path: '/jobs/{jobId}',
    operationId: 'getJob',
    tags,
    summary: 'One job',
    request: { params: JobParams },
    responses: { 200: jsonContent(JobSchema, 'The job'), ...problemResponses(404) },
  }),
  cancel: createRoute({
    method: 'post',
    path: '/jobs/{jobId}/cancel',
    operationId: 'cancelJob',
    tags,
    summary: 'Cancel a job',
    description:
      'A queued job is cancelled at once (200). A running backup or audit is asked to stop (202; it becomes `cancelled` when it has); a running restore cannot be stopped halfway: 409 `job-not-cancellable`. A finished job answers 409 `job-finished`.',
    request: { params: JobParams },
    responses: {
      200: jsonContent(JobSchema, 'Cancelled'),
      202: jsonContent(JobSchema, 'Asked to stop; still running'),
      ...problemResponses(403, 404, 409),
    },
  }),
};

/** The sites a scope includes, as a condition on a site id column (sites/visible-sites.ts: the base knows no site). */
export type VisibleSites = (scope: SiteScope, siteId: SQLiteColumn) => SQL | undefined;

export function createJobsRoutes({ jobs, visibleSites }: { jobs: JobRunner; visibleSites?: VisibleSites }) {
  /**
   * Site scopes (issue 33): a request limited to tags sees the jobs of its sites, never a job without a site
   * (a fleet job spans sites: followed through its own route). Without `visibleSites` such a request sees none.
   */
  const visibleTo = (scope: SiteScope): SQL | undefined =>
    scope.kind === 'all' ? undefined : (visibleSites?.(scope, jobsTable.siteId) ?? sql`0`);
  return new OpenAPIHono<AppEnv>()
    .openapi(routes.list, async (c) => {
      const { limit, cursor, siteId, kind, state } = c.req.valid('query');
      const key = decodeCursor(cursor, CURSOR_KEY);
      const [at, id] = key === undefined ? [] : key.split('~');
      const rows = await jobs.list({
        siteId,
        kind,
        state,
        before: at === undefined || id === undefined ? undefined : { createdAt: new Date(Number(at)), id },
        limit: limit + 1,
        visible: visibleTo(c.get('access').sites),
      });
      const page = toPage(rows, limit, (row) => `${row.createdAt.getTime()}~${row.id}`);
      return c.json({ items: page.items.map(jobView), nextCursor: page.nextCursor }, 200);
    })
    .openapi(routes.get, async (c) => {
      const { jobId } = c.req.valid('param');
      const visible = visibleTo(c.get('access').sites);
      if (visible === undefined) return c.json(jobView(await jobs.get(jobId)), 200);
      // Outside the scope: the answer to an unknown id (jobs.get's).
      const [job] = await jobs.list({ id: jobId, visible, limit: 1 });
      if (!job) throw jobsProblems.notFound.create(`there is no job ${jobId}`);
      return c.json(jobView(job), 200);
    })
    .openapi(routes.cancel, async (c) => {
      const job = await jobs.cancel(c.req.valid('param').jobId, c.get('actor'));
      return job.state === 'cancelled' ? c.json(jobView(job), 200) : c.json(jobView(job), 202);
    });
}
