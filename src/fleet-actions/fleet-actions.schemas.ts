import { z } from '@hono/zod-openapi';
import { JobSchema } from '../jobs/jobs.schemas.js';
import { SlugPattern, TagFilter } from '../sites/index.js';

const MAX_SITES_PER_REQUEST = 10_000;

export const fleetActions = ['install', 'activate', 'deactivate', 'remove'] as const;
export type FleetActionName = (typeof fleetActions)[number];

export const FleetActionInput = z
  .object({
    action: z.enum(fleetActions).openapi({
      description:
        '`install` (from the plugin or theme directory; a theme needs connector 1.8.0+), `activate`, `deactivate` (plugins only) or `remove` (delete the files).',
    }),
    type: z
      .enum(['plugin', 'theme'])
      .default('plugin')
      .openapi({ description: 'What the slug names (default `plugin`).' }),
    slug: z
      .string({ error: 'slug is required' })
      .min(1)
      .max(200)
      .regex(SlugPattern, 'a slug has only letters, digits, dots, dashes and underscores')
      .openapi({ example: 'akismet' }),
    activate: z.boolean().optional().openapi({ description: '`install`: activate it once installed (default false).' }),
    deactivate: z.boolean().optional().openapi({
      description:
        '`remove` of a plugin: deactivate it first where it is active (default false: an active plugin is not removed, its site’s result is `plugin-active`).',
    }),
    sites: z
      .array(z.string().min(1).max(64))
      .min(1)
      .max(MAX_SITES_PER_REQUEST)
      .optional()
      .openapi({ description: 'These sites (ids); one that is not connected gets a `skipped` result.' }),
    tag: TagFilter.openapi({
      description:
        'The connected sites carrying all these tags (for any action but `install`: those of them whose last sync lists the item).',
    }),
    all: z.literal(true).optional().openapi({
      description: 'Every connected site (for any action but `install`: those whose last sync lists the item).',
    }),
  })
  .openapi('FleetActionInput');
export type FleetActionRequest = z.infer<typeof FleetActionInput>;

const siteResultStates = ['queued', 'running', 'succeeded', 'failed', 'skipped'] as const;

export const FleetActionSiteSchema = z
  .object({
    siteId: z.string(),
    url: z.string(),
    state: z.enum(siteResultStates).openapi({
      description:
        '`skipped`: nothing to do or not done (the site is not connected, the plugin already installed or already gone, the action was cancelled or the daemon stopped before the site’s turn).',
    }),
    reason: z
      .string()
      .nullable()
      .openapi({ description: 'The problem name of a failure or skip (`site-not-connected`, `plugin-active`, …).' }),
    message: z.string().nullable(),
    version: z
      .string()
      .nullable()
      .openapi({ description: 'The item’s version on the site afterwards, when it is installed.' }),
    status: z
      .string()
      .nullable()
      .openapi({ description: 'The item’s status on the site afterwards (`active`, `inactive`, …).' }),
    finishedAt: z.string().nullable(),
  })
  .openapi('FleetActionSite');
export type FleetActionSite = z.infer<typeof FleetActionSiteSchema>;

export const FleetActionSchema = z
  .object({
    id: z.string(),
    state: JobSchema.shape.state,
    reason: z.string().nullable(),
    message: z.string().nullable(),
    action: z.enum(fleetActions),
    type: z.enum(['plugin', 'theme']),
    slug: z.string(),
    requestedBy: z
      .object({ kind: z.enum(['token', 'user']), id: z.string() })
      .nullable()
      .openapi({ description: 'Who asked for it: an API token or a dashboard user, by id.' }),
    counts: z.object({
      total: z.number().int(),
      done: z.number().int(),
      succeeded: z.number().int(),
      failed: z.number().int(),
      skipped: z.number().int(),
    }),
    sites: z.array(FleetActionSiteSchema),
    job: z.string().openapi({
      description: 'The same run as a job: `GET /api/jobs/{id}`, cancel with `POST /api/jobs/{id}/cancel`.',
    }),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
  })
  .openapi('FleetAction');
export type FleetActionView = z.infer<typeof FleetActionSchema>;

export const FleetActionParams = z.object({
  actionId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'actionId', in: 'path' }, example: 'fact_01jc0z6x8m3yq4x0h7a9b2c3d4' }),
});
