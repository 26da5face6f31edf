import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { decodeCursor, pageSchema, PaginationQuery, toPage } from '../http/pagination.js';
import {
  CreateWebhookInput,
  DeliverySchema,
  deliveryView,
  UpdateWebhookInput,
  WebhookIdParam,
  WebhookSchema,
  webhookView,
} from './webhooks.schemas.js';
import type { WebhooksService } from './webhooks.service.js';

const tags = ['Webhooks'];
const jsonBody = <T extends typeof CreateWebhookInput | typeof UpdateWebhookInput>(schema: T) => ({
  required: true,
  content: { 'application/json': { schema } },
});
const WRITE_ONLY = 'Needs a write token, reading too: a webhook’s URL can itself be a credential (Slack’s are).';

const routes = {
  list: createRoute({
    method: 'get',
    path: '/webhooks',
    operationId: 'listWebhooks',
    tags,
    summary: 'Webhooks',
    description: `Newest first. ${WRITE_ONLY}`,
    request: { query: PaginationQuery },
    responses: {
      200: jsonContent(pageSchema(WebhookSchema, 'WebhookPage'), 'A page of webhooks'),
      ...problemResponses(400, 403),
    },
  }),
  create: createRoute({
    method: 'post',
    path: '/webhooks',
    operationId: 'createWebhook',
    tags,
    summary: 'Add a webhook',
    description:
      'Every event named in `events` (or every event, with `"*"`) is POSTed to `url` from then on, signed with `secret` if one is set (`Sitewarden-Signature: v1=<hex HMAC-SHA256 of "<Sitewarden-Timestamp>.<body>">`). A delivery that does not get a 2xx answer is retried with exponential backoff up to `SITEWARDEN_WEBHOOK_MAX_ATTEMPTS` attempts.',
    request: { body: jsonBody(CreateWebhookInput) },
    responses: { 201: jsonContent(WebhookSchema, 'The webhook'), ...problemResponses(400, 403, 413, 415, 422) },
  }),
  get: createRoute({
    method: 'get',
    path: '/webhooks/{id}',
    operationId: 'getWebhook',
    tags,
    summary: 'One webhook',
    description: WRITE_ONLY,
    request: { params: WebhookIdParam },
    responses: { 200: jsonContent(WebhookSchema, 'The webhook'), ...problemResponses(403, 404) },
  }),
  update: createRoute({
    method: 'patch',
    path: '/webhooks/{id}',
    operationId: 'updateWebhook',
    tags,
    summary: 'Change a webhook',
    description:
      'Fields left out keep their value; `secret: null` removes the secret. Deliveries already queued keep the body they were made with.',
    request: { params: WebhookIdParam, body: jsonBody(UpdateWebhookInput) },
    responses: {
      200: jsonContent(WebhookSchema, 'The webhook now'),
      ...problemResponses(400, 403, 404, 413, 415, 422),
    },
  }),
  delete: createRoute({
    method: 'delete',
    path: '/webhooks/{id}',
    operationId: 'deleteWebhook',
    tags,
    summary: 'Remove a webhook',
    description: 'Its deliveries, pending ones included, are removed with it.',
    request: { params: WebhookIdParam },
    responses: { 204: { description: 'Removed' }, ...problemResponses(403, 404) },
  }),
  deliveries: createRoute({
    method: 'get',
    path: '/webhooks/{id}/deliveries',
    operationId: 'listWebhookDeliveries',
    tags,
    summary: 'A webhook’s deliveries',
    description: `Newest first: status, attempts, and the last attempt’s HTTP status or failure cause and duration. Finished deliveries are kept \`SITEWARDEN_WEBHOOK_RETENTION_DAYS\` days. ${WRITE_ONLY}`,
    request: { params: WebhookIdParam, query: PaginationQuery },
    responses: {
      200: jsonContent(pageSchema(DeliverySchema, 'WebhookDeliveryPage'), 'A page of deliveries'),
      ...problemResponses(400, 403, 404),
    },
  }),
  test: createRoute({
    method: 'post',
    path: '/webhooks/{id}/test',
    operationId: 'testWebhook',
    tags,
    summary: 'Send a test delivery',
    description:
      'Queues a `webhook.test` event to this webhook and answers 202 at once with the delivery; follow it in `GET /webhooks/{id}/deliveries`.',
    request: { params: WebhookIdParam },
    responses: { 202: jsonContent(DeliverySchema, 'Queued'), ...problemResponses(403, 404, 409) },
  }),
};

export function createWebhooksRoutes({ webhooks }: { webhooks: WebhooksService }) {
  const app = new OpenAPIHono<AppEnv>();
  // Owner work, reads included (a webhook's URL can be a credential): src/http/permissions.ts.
  return app
    .openapi(routes.list, async (c) => {
      const { limit, cursor } = c.req.valid('query');
      const page = toPage(await webhooks.list({ limit: limit + 1, before: decodeCursor(cursor) }), limit);
      return c.json({ items: page.items.map(webhookView), nextCursor: page.nextCursor }, 200);
    })
    .openapi(routes.create, async (c) => c.json(webhookView(await webhooks.create(c.req.valid('json'))), 201))
    .openapi(routes.get, async (c) => c.json(webhookView(await webhooks.get(c.req.valid('param').id)), 200))
    .openapi(routes.update, async (c) =>
      c.json(webhookView(await webhooks.update(c.req.valid('param').id, c.req.valid('json'))), 200),
    )
    .openapi(routes.delete, async (c) => {
      await webhooks.delete(c.req.valid('param').id);
      return c.body(null, 204);
    })
    .openapi(routes.deliveries, async (c) => {
      const { limit, cursor } = c.req.valid('query');
      const page = toPage(
        await webhooks.deliveries(c.req.valid('param').id, { limit: limit + 1, before: decodeCursor(cursor) }),
        limit,
      );
      return c.json({ items: page.items.map(deliveryView), nextCursor: page.nextCursor }, 200);
    })
    .openapi(routes.test, async (c) => c.json(deliveryView(await webhooks.test(c.req.valid('param').id)), 202));
}
