import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { decodeCursor, pageSchema, PaginationQuery, toPage } from '../http/pagination.js';
import { SiteIdPathParam } from '../sites/index.js';
import { DowntimeEventSchema, DowntimeQuery, UptimeReportSchema } from './uptime.schemas.js';
import type { UptimeService } from './uptime.service.js';

const tags = ['Uptime'];

const getUptime = createRoute({
  method: 'get',
  path: '/sites/{siteId}/uptime',
  operationId: 'getSiteUptime',
  tags,
  summary: 'Uptime of a site',
  description:
    'Current status, uptime percentages over 24 hours, 7 and 30 days, the certificate, the latest probes and hourly buckets.',
  request: { params: SiteIdPathParam },
  responses: { 200: jsonContent(UptimeReportSchema, 'The site’s uptime'), ...problemResponses(404) },
});

const listDowntime = createRoute({
  method: 'get',
  path: '/sites/{siteId}/uptime/downtime',
  operationId: 'listSiteDowntime',
  tags,
  summary: 'Downtime events of a site',
  description:
    'Newest first. An event starts at the first failed probe of a confirmed outage and ends at the next successful probe; an ongoing one has no end. `from`/`to` keep events overlapping that range.',
  request: { params: SiteIdPathParam, query: PaginationQuery.extend(DowntimeQuery.shape) },
  responses: {
    200: jsonContent(pageSchema(DowntimeEventSchema, 'DowntimeEventPage'), 'A page of downtime events'),
    ...problemResponses(400, 404),
  },
});

export function createUptimeRoutes({ uptime }: { uptime: UptimeService }) {
  return new OpenAPIHono<AppEnv>()
    .openapi(getUptime, async (c) => c.json(await uptime.report(c.req.valid('param').siteId), 200))
    .openapi(listDowntime, async (c) => {
      const { limit, cursor, from, to } = c.req.valid('query');
      const rows = await uptime.downtime(c.req.valid('param').siteId, {
        limit,
        cursor: decodeCursor(cursor, /^\d+$/),
        from,
        to,
      });
      return c.json(toPage(rows, limit), 200);
    });
}
