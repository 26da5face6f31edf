import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import type { FleetActions } from './fleet-actions.service.js';
import { FleetActionInput, FleetActionParams, FleetActionSchema } from './fleet-actions.schemas.js';

const tags = ['Fleet'];

const routes = {
  start: createRoute({
    method: 'post',
    path: '/fleet/actions',
    operationId: 'startFleetAction',
    tags,
    summary: 'Install, activate, deactivate or remove one plugin or theme on many sites',
    description:
      'Queues one action on one item (by slug) for the sites selected by exactly one of `sites`, `tag` or `all: true`, and answers 202 with it; it runs in the background, each site through the single-site plugin or theme operation (one operation per site at a time), and records each site’s result and who asked. Plugins: `install` (from the plugin directory; `activate` too), `activate`, `deactivate`, `remove` (an active plugin is not removed unless `deactivate: true`). Themes: `install` (from the theme directory, through connector 1.8.0+: a site with an older connector fails with `connector-outdated`; `activate` too), `activate` and `remove` (a theme is not deactivated). A site that is not connected, or already as asked, gets a `skipped` result; a site that refuses, a `failed` one: neither stops the others. Follow it with `GET /api/fleet/actions/{actionId}` (or `/api/jobs/{id}`); cancel with `POST /api/jobs/{id}/cancel` (sites under way finish).',
    request: { body: { content: { 'application/json': { schema: FleetActionInput } }, required: true } },
    responses: {
      202: jsonContent(FleetActionSchema, 'Queued'),
      ...problemResponses(400, 403, 404, 415, 422),
    },
  }),
  list: createRoute({
    method: 'get',
    path: '/fleet/actions',
    operationId: 'listFleetActions',
    tags,
    summary: 'The newest fleet actions',
    request: {
      query: z.object({
        limit: z.coerce.number().int().min(1).max(100).default(20).openapi({ description: 'How many (at most 100).' }),
      }),
    },
    responses: {
      200: jsonContent(z.object({ items: z.array(FleetActionSchema) }).openapi('FleetActionList'), 'Newest first'),
      ...problemResponses(400),
    },
  }),
  get: createRoute({
    method: 'get',
    path: '/fleet/actions/{actionId}',
    operationId: 'getFleetAction',
    tags,
    summary: 'One fleet action, with each site’s result',
    request: { params: FleetActionParams },
    responses: { 200: jsonContent(FleetActionSchema, 'The action'), ...problemResponses(404) },
  }),
};

export function createFleetActionsRoutes({ fleetActions }: { fleetActions: FleetActions }) {
  return (
    new OpenAPIHono<AppEnv>()
      .openapi(routes.start, async (c) =>
        c.json(await fleetActions.start(c.req.valid('json'), c.get('actor') ?? null), 202),
      )
      // Site scopes (issue 33): an action is shown to a request limited to tags when all its sites are in scope.
      .openapi(routes.list, async (c) =>
        c.json({ items: await fleetActions.list(c.req.valid('query').limit, c.get('access').sites) }, 200),
      )
      .openapi(routes.get, async (c) =>
        c.json(await fleetActions.get(c.req.valid('param').actionId, c.get('access').sites), 200),
      )
  );
}
