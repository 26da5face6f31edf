import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from './auth.js';
import { jsonContent } from './openapi.js';

const health = createRoute({
  method: 'get',
  path: '/health',
  operationId: 'getHealth',
  tags: ['Service'],
  summary: 'Health check',
  description: 'Unauthenticated and cheap: the daemon is up and its database answers.',
  security: [],
  responses: {
    200: jsonContent(z.object({ status: z.literal('ok'), version: z.string() }).openapi('Health'), 'Healthy'),
    503: jsonContent(
      z.object({ status: z.literal('unavailable'), version: z.string() }),
      'The database does not answer',
    ),
  },
});

export function createHealthRoutes({ checkDatabase, version }: { checkDatabase: () => boolean; version: string }) {
  return new OpenAPIHono<AppEnv>().openapi(health, (c) =>
    checkDatabase()
      ? c.json({ status: 'ok' as const, version }, 200)
      : c.json({ status: 'unavailable' as const, version }, 503),
  );
}
