import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/auth.js';
import type { Access } from '../shared/actor.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { decodeCursor, pageSchema, toPage } from '../http/pagination.js';
import { RefreshInput, type FleetRefresh } from './fleet.refresh.js';
import { ITEM_KEY, type FleetRepository, type ItemType } from './fleet.repository.js';
import {
  FleetInstalledQuery,
  FleetItemParam,
  FleetUpdatesPage,
  FleetUpdatesQuery,
  InstalledItemSchema,
  ItemSiteSchema,
  type PendingUpdateItem,
} from './fleet.schemas.js';

const tags = ['Fleet'];
type UpdateRow = PendingUpdateItem;
const SITE_KEY = /^[a-z]+_[0-9a-z]{26}$/;
const versionsOf = (list: string | null) => (list ? [...new Set(list.split(','))].sort() : []);
/**
 * The request's site scope (issue 33): the counts and sites of the sites it may see. Absent without an
 * authenticated request (the routes mounted alone, bench/lab/fleet-updates.ts): every site, as the app's
 * permission check itself lets such a request through.
 */
const scopeOf = (c: Context<AppEnv>) => (c.get('access') as Access | undefined)?.sites;
const siteListOf = (type: ItemType, slug: string) => `/api/fleet/${type}s/${encodeURIComponent(slug)}`;

const listFleetUpdates = createRoute({
  method: 'get',
  path: '/fleet/updates',
  operationId: 'listFleetUpdates',
  tags,
  summary: 'Pending updates across the fleet',
  description:
    'Every update the sites are offered, as of each site’s last sync (answered from the database, never from the sites): WordPress core, plugins, themes and translations (language packs). Grouped by item and version offered (core versions first, then plugins and themes by slug, then one entry counting the sites with pending language packs), or by site (each with its core, plugin, theme and translation updates). `type` narrows to one kind; `tag` to sites carrying all the tags given.',
  request: { query: FleetUpdatesQuery },
  responses: { 200: jsonContent(FleetUpdatesPage, 'A page of pending updates'), ...problemResponses(400) },
});

const installedRoute = (type: ItemType) =>
  createRoute({
    method: 'get',
    path: `/fleet/${type}s`,
    operationId: type === 'plugin' ? 'listFleetPlugins' : 'listFleetThemes',
    tags,
    summary: `Every ${type} installed across the fleet`,
    description: `Each ${type} by slug: on how many sites, active on how many, at which versions, with how many offered an update.`,
    request: { query: FleetInstalledQuery },
    responses: {
      200: jsonContent(pageSchema(InstalledItemSchema, `Fleet${type === 'plugin' ? 'Plugin' : 'Theme'}Page`), 'A page'),
      ...problemResponses(400),
    },
  });

const itemSitesRoute = (type: ItemType) =>
  createRoute({
    method: 'get',
    path: `/fleet/${type}s/{slug}`,
    operationId: type === 'plugin' ? 'listFleetPluginSites' : 'listFleetThemeSites',
    tags,
    summary: `The sites that have one ${type}`,
    description: `Each site with the ${type} installed: its version, whether it is active, and the update it is offered.`,
    request: { params: FleetItemParam, query: FleetInstalledQuery },
    responses: {
      200: jsonContent(pageSchema(ItemSiteSchema, `Fleet${type === 'plugin' ? 'Plugin' : 'Theme'}SitePage`), 'A page'),
      ...problemResponses(400),
    },
  });

const refreshFleet = createRoute({
  method: 'post',
  path: '/fleet/refresh',
  operationId: 'refreshFleetInventory',
  tags,
  summary: 'Read sites’ inventories again now',
  description:
    'Queues a sync (plugins, themes, versions, updates offered) for the sites selected by exactly one of `sites`, `tag` or `all: true`, ahead of the schedule. Sites already syncing or busy are skipped; 202 says how many were selected and queued.',
  request: { body: { content: { 'application/json': { schema: RefreshInput } }, required: true } },
  responses: {
    202: jsonContent(
      z.object({ selected: z.number().int(), queued: z.number().int() }).openapi('FleetRefreshQueued'),
      'Queued',
    ),
    ...problemResponses(400, 403, 404, 415),
  },
});

/** GET /api/fleet/…: the fleet's inventory and pending updates, one indexed query per page. */
export function createFleetRoutes({ fleet, fleetRefresh }: { fleet: FleetRepository; fleetRefresh: FleetRefresh }) {
  const app = new OpenAPIHono<AppEnv>().openapi(listFleetUpdates, async (c) => {
    const { groupBy, type, tag, limit, cursor } = c.req.valid('query');
    const scope = scopeOf(c);
    const itemType = type === 'plugin' || type === 'theme' ? type : undefined;
    const filter = { tags: tag, type: itemType, scope };
    const withItems = type === undefined || itemType !== undefined;
    const withCore = type === undefined || type === 'core';
    const withTranslations = type === undefined || type === 'translations';
    if (groupBy === 'site') {
      const offers = [...(withCore ? ['core' as const] : []), ...(withTranslations ? ['translation' as const] : [])];
      const rows = await fleet.pendingBySite({
        filter,
        offers,
        items: withItems,
        limit: limit + 1,
        after: decodeCursor(cursor, SITE_KEY),
      });
      const page = toPage(rows, limit, (row) => row.siteId);
      return c.json({ groupBy, ...page }, 200);
    }
    // Core first, then plugins and themes, then translations: the cursor's type says where the last page ended.
    const after = decodeCursor(cursor, ITEM_KEY);
    const [afterType, , afterVersion] = after?.split('\t') ?? [];
    const rows: UpdateRow[] = [];
    if (withCore && (afterType === undefined || afterType === 'core'))
      for (const row of await fleet.pendingCore({
        tags: tag,
        afterVersion: afterType === 'core' ? afterVersion : undefined,
        scope,
      }))
        rows.push({
          type: 'core',
          slug: 'wordpress',
          name: 'WordPress',
          fromVersions: versionsOf(row.fromVersions),
          toVersion: row.toVersion,
          sites: row.sites,
          siteList: '/api/fleet/updates?groupBy=site&type=core',
        });
    if (withItems && rows.length <= limit && afterType !== 'translations')
      for (const row of await fleet.pendingByItem({
        filter,
        limit: limit + 1 - rows.length,
        after: afterType === 'plugin' || afterType === 'theme' ? after : undefined,
      }))
        rows.push({ ...row, fromVersions: versionsOf(row.fromVersions), siteList: siteListOf(row.type, row.slug) });
    if (withTranslations && rows.length <= limit && afterType !== 'translations') {
      const pending = await fleet.pendingTranslations({ tags: tag, scope });
      if (pending.sites > 0)
        rows.push({
          type: 'translations',
          name: 'Translations',
          ...pending,
          siteList: '/api/fleet/updates?groupBy=site&type=translations',
        });
    }
    const page = toPage(rows, limit, (row) =>
      row.type === 'translations' ? 'translations\tall' : `${row.type}\t${row.slug}\t${row.toVersion}`,
    );
    return c.json({ groupBy, ...page }, 200);
  });
  for (const type of ['plugin', 'theme'] as const) {
    app.openapi(installedRoute(type), async (c) => {
      const { tag, limit, cursor } = c.req.valid('query');
      const rows = await fleet.installed({
        type,
        tags: tag,
        limit: limit + 1,
        after: decodeCursor(cursor, ITEM_KEY),
        scope: scopeOf(c),
      });
      const page = toPage(rows, limit, (row) => `${row.type}\t${row.slug}`);
      return c.json(
        {
          items: page.items.map((row) => ({
            ...row,
            versions: versionsOf(row.versions),
            siteList: siteListOf(type, row.slug),
          })),
          nextCursor: page.nextCursor,
        },
        200,
      );
    });
    app.openapi(itemSitesRoute(type), async (c) => {
      const { slug } = c.req.valid('param');
      const { tag, limit, cursor } = c.req.valid('query');
      // An item only outside the request's scope answers as an unknown slug does: an empty page.
      const rows = await fleet.sitesWith({
        type,
        slug,
        tags: tag,
        limit: limit + 1,
        after: decodeCursor(cursor, SITE_KEY),
        scope: scopeOf(c),
      });
      const page = toPage(rows, limit, (row) => row.siteId);
      return c.json(
        {
          items: page.items.map(({ updateVersion, ...row }) => ({
            ...row,
            update: updateVersion ? { version: updateVersion } : null,
          })),
          nextCursor: page.nextCursor,
        },
        200,
      );
    });
  }
  app.openapi(refreshFleet, async (c) => c.json(await fleetRefresh.refresh(c.req.valid('json')), 202));
  return app;
}
