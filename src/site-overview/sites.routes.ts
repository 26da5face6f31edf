import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { bodyOrQueryRequest, readBodyOrQuery } from '../http/input.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { decodeCursor, pageSchema, PaginationQuery, toPage } from '../http/pagination.js';
import { checkTagsKeepScope } from '../http/permissions.js';
import { toSiteDetailsView, toSiteView } from './site-view.js';
import type { InventoryRepository } from '../inventory/index.js';
import { ConnectSiteInput, ListSitesQuery, SiteIdParam, SiteTagsInput, type SitesService } from '../sites/index.js';
import type { StatusesOf } from '../uptime/index.js';
import { PendingSiteSchema, SiteDetailsSchema, SiteSchema } from './site-overview.schemas.js';

const tags = ['Sites'];

const listSites = createRoute({
  method: 'get',
  path: '/sites',
  operationId: 'listSites',
  tags,
  summary: 'List sites',
  description:
    'All sites, oldest first, including ones still waiting for approval. Filters combine: `state`, `tag` (repeat for sites carrying all), `q` (URL or name), and WordPress/PHP/connector versions (`6.5` matches `6.5.5`).',
  request: { query: PaginationQuery.extend(ListSitesQuery.shape) },
  responses: { 200: jsonContent(pageSchema(SiteSchema, 'SitePage'), 'A page of sites'), ...problemResponses(400) },
});

const getSite = createRoute({
  method: 'get',
  path: '/sites/{id}',
  operationId: 'getSite',
  tags,
  summary: 'Site details',
  description: 'The site with its plugins, themes and status, as last synced (the API never waits on the site).',
  request: { params: SiteIdParam },
  responses: { 200: jsonContent(SiteDetailsSchema, 'The site'), ...problemResponses(404) },
});

const connectSite = createRoute({
  method: 'post',
  path: '/sites',
  operationId: 'connectSite',
  tags,
  summary: 'Connect a site',
  description: [
    'With `url` alone: answers 202 with the site `pending` and an `authorizeUrl` (WordPress’s own authorize-application screen). When an administrator approves there, WordPress sends the application password to the daemon’s callback and the site becomes `connected`.',
    'With `url`, `username` and `applicationPassword`: checks them against the site at once and answers 201 with the connected site.',
    'Parameters may be sent as JSON, as a form, or in the query string.',
  ].join('\n\n'),
  request: bodyOrQueryRequest(ConnectSiteInput),
  responses: {
    201: jsonContent(SiteDetailsSchema, 'Connected with the given credentials'),
    202: jsonContent(PendingSiteSchema, 'Waiting for an administrator to approve at `authorizeUrl`'),
    ...problemResponses(400, 403, 409, 415, 422, 502, 504),
  },
});

const deleteSite = createRoute({
  method: 'delete',
  path: '/sites/{id}',
  operationId: 'disconnectSite',
  tags,
  summary: 'Disconnect a site',
  description:
    'Revokes Sitewarden’s application password on the site (best effort; a failure is logged as `site.credential_revoke_failed`) and removes the site.',
  request: { params: SiteIdParam },
  responses: { 204: { description: 'Removed' }, ...problemResponses(403, 404) },
});

const setSiteTags = createRoute({
  method: 'put',
  path: '/sites/{id}/tags',
  operationId: 'setSiteTags',
  tags,
  summary: 'Set a site’s tags',
  description:
    'Replaces the site’s tags. Tags are stored lowercase, without repeats. A principal limited to tags must leave the site at least one of them (403 `forbidden` otherwise).',
  request: {
    params: SiteIdParam,
    body: { content: { 'application/json': { schema: SiteTagsInput } }, required: true },
  },
  responses: {
    200: jsonContent(z.object({ tags: z.array(z.string()) }).openapi('SiteTags'), 'The site’s tags now'),
    ...problemResponses(400, 403, 404, 415),
  },
});

const listTags = createRoute({
  method: 'get',
  path: '/tags',
  operationId: 'listTags',
  tags,
  summary: 'Tags in use',
  description: 'Every tag some site carries, by name, with how many sites carry it.',
  responses: {
    200: jsonContent(
      z.object({ items: z.array(z.object({ tag: z.string(), sites: z.number().int() })) }).openapi('TagCounts'),
      'The tags',
    ),
    ...problemResponses(401),
  },
});

/** The sites resource as the API shows it: each site with its uptime status, and its detail with its inventory. */
export function createSitesRoutes({
  sites,
  inventories,
  uptime,
}: {
  sites: SitesService;
  inventories: Pick<InventoryRepository, 'read'>;
  uptime: { statusesOf: StatusesOf };
}) {
  const statusOf = async (siteId: string) => (await uptime.statusesOf([siteId])).get(siteId) ?? null;
  return new OpenAPIHono<AppEnv>()
    .openapi(listSites, async (c) => {
      const { limit, cursor, state, ...filter } = c.req.valid('query');
      const rows = await sites.list({
        limit,
        after: decodeCursor(cursor),
        state,
        filter,
        scope: c.get('access').sites,
      });
      const page = toPage(rows, limit);
      const ids = page.items.map((row) => row.id);
      const [tagsOf, statuses] = await Promise.all([sites.tagsOf(ids), uptime.statusesOf(ids)]);
      return c.json(
        {
          items: page.items.map((row) => toSiteView(row, statuses.get(row.id) ?? null, tagsOf.get(row.id))),
          nextCursor: page.nextCursor,
        },
        200,
      );
    })
    .openapi(getSite, async (c) => {
      const site = await sites.get(c.req.valid('param').id);
      const tagsOf = await sites.tagsOf([site.id]);
      return c.json(
        toSiteDetailsView(site, await inventories.read(site.id), await statusOf(site.id), tagsOf.get(site.id)),
        200,
      );
    })
    .openapi(connectSite, async (c) => {
      const input = readBodyOrQuery(c, ConnectSiteInput);
      const result = await sites.connect(input);
      if (result.mode === 'authorization') {
        c.header('Location', `/api/sites/${result.site.id}`);
        const tagsOf = await sites.tagsOf([result.site.id]);
        return c.json(
          { ...toSiteView(result.site, null, tagsOf.get(result.site.id)), authorizeUrl: result.authorizeUrl },
          202,
        );
      }
      c.header('Location', `/api/sites/${result.site.id}`);
      const tags = (await sites.tagsOf([result.site.id])).get(result.site.id);
      return c.json(
        toSiteDetailsView(result.site, await inventories.read(result.site.id), await statusOf(result.site.id), tags),
        201,
      );
    })
    .openapi(setSiteTags, async (c) => {
      const { tags } = c.req.valid('json');
      // Tags move a site between scopes: a scoped principal's site keeps one of its scope tags.
      checkTagsKeepScope(c.get('access'), tags);
      return c.json({ tags: await sites.setTags(c.req.valid('param').id, tags) }, 200);
    })
    .openapi(listTags, async (c) => c.json({ items: await sites.tagCounts(c.get('access').sites) }, 200))
    .openapi(deleteSite, async (c) => {
      await sites.disconnect(c.req.valid('param').id);
      return c.body(null, 204);
    });
}
