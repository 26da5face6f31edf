import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { bodyOrQueryRequest, readBodyOrQuery } from '../http/input.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { decodeCursor, PaginationQuery, toPage } from '../http/pagination.js';
import { SiteIdPathParam } from '../sites/index.js';
import { toAuditView } from './performance-view.js';
import {
  AuditIdParam,
  AuditSchema,
  HistoryQuery,
  PerformanceOverviewSchema,
  RequestAuditInput,
} from './performance.schemas.js';
import type { PerformanceService } from './performance.service.js';
import { auditReportResponse } from './report-response.js';

const tags = ['Performance'];

const overview = createRoute({
  method: 'get',
  path: '/sites/{siteId}/performance',
  operationId: 'listAudits',
  tags,
  summary: 'Performance of a site',
  description:
    'The latest completed Lighthouse audit per form factor, and the history of audits (newest first; filter by form factor and time range).',
  request: { params: SiteIdPathParam, query: PaginationQuery.extend(HistoryQuery.shape) },
  responses: {
    200: jsonContent(PerformanceOverviewSchema, 'Latest audits and history'),
    ...problemResponses(400, 404),
  },
});

const requestAudit = createRoute({
  method: 'post',
  path: '/sites/{siteId}/performance',
  operationId: 'requestAudit',
  tags,
  summary: 'Audit a site now',
  description:
    'Queues a Lighthouse audit of the site’s home page and answers at once; poll the audit’s URL (`Location`). An audit of that form factor already waiting or running is returned instead of a second one.',
  request: { params: SiteIdPathParam, ...bodyOrQueryRequest(RequestAuditInput) },
  responses: { 202: jsonContent(AuditSchema, 'The queued audit'), ...problemResponses(400, 403, 404, 415) },
});

const getAudit = createRoute({
  method: 'get',
  path: '/sites/{siteId}/performance/{auditId}',
  operationId: 'getAudit',
  tags,
  summary: 'One audit',
  request: { params: AuditIdParam },
  responses: { 200: jsonContent(AuditSchema, 'The audit'), ...problemResponses(400, 404) },
});

const getReport = createRoute({
  method: 'get',
  path: '/sites/{siteId}/performance/{auditId}/report',
  operationId: 'getAuditReport',
  tags,
  summary: 'The Lighthouse HTML report of an audit',
  description: 'Self-contained HTML, sent gzip-encoded to clients that accept it.',
  request: { params: AuditIdParam },
  responses: {
    200: { description: 'The report', content: { 'text/html': { schema: { type: 'string' } } } },
    ...problemResponses(400, 404),
  },
});

export function createPerformanceRoutes({ performance }: { performance: PerformanceService }) {
  return new OpenAPIHono<AppEnv>()
    .openapi(overview, async (c) => {
      const { siteId } = c.req.valid('param');
      const { limit, cursor, formFactor, from, to } = c.req.valid('query');
      const rows = await performance.history(siteId, {
        limit,
        before: decodeCursor(cursor),
        formFactor,
        from: from ? new Date(from) : undefined,
        to: to ? new Date(to) : undefined,
      });
      const page = toPage(rows, limit);
      const latest = await performance.latest(siteId);
      return c.json(
        {
          latest: {
            mobile: latest.mobile && toAuditView(latest.mobile),
            desktop: latest.desktop && toAuditView(latest.desktop),
          },
          history: { items: page.items.map(toAuditView), nextCursor: page.nextCursor },
        },
        200,
      );
    })
    .openapi(requestAudit, async (c) => {
      const { siteId } = c.req.valid('param');
      const audit = await performance.requestAudit(siteId, readBodyOrQuery(c, RequestAuditInput));
      c.header('Location', `/api/sites/${siteId}/performance/${audit.id}`);
      return c.json(toAuditView(audit), 202);
    })
    .openapi(getAudit, async (c) => {
      const { siteId, auditId } = c.req.valid('param');
      return c.json(toAuditView(await performance.get(siteId, auditId)), 200);
    })
    .openapi(getReport, async (c) => {
      const { siteId, auditId } = c.req.valid('param');
      return auditReportResponse(await performance.report(siteId, auditId), c.req.header('accept-encoding')) as never;
    });
}
