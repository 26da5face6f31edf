import { z } from '@hono/zod-openapi';
import { JobSchema } from '../jobs/jobs.schemas.js';
import { SafeUpdateChecksInput, SafeUpdatePolicySchema } from '../safe-updates/index.js';
import { PaginationQuery } from '../http/pagination.js';
import { SlugPattern, TagFilter } from '../sites/index.js';
import { triggerKinds, updateItemTypes, updateResults } from '../update-history/index.js';

const MAX_SITES_PER_REQUEST = 10_000;
const MAX_ITEMS_PER_REQUEST = 1_000;
const SiteId = z.string().min(1).max(64);

const SelectedItem = z
  .object({
    type: z.enum(updateItemTypes),
    slug: z.string().min(1).max(200).regex(SlugPattern).optional().openapi({
      description:
        'A plugin or theme slug; without it, every pending update of that type. Not for core or translations.',
    }),
  })
  .openapi('BulkUpdateItem');

/** The checks of every safe update of a run: a single safe update's `policy` object (one schema, src/shared/safe-update-checks.ts). */
const CHECKS = SafeUpdateChecksInput.optional().openapi({
  description:
    'With `safe`: how every safe update of the run checks the sites and when it rolls back, the same object as a single safe update’s `policy` (`visual.enabled`, `visual.threshold`, `visual.rollback` default false, `urls`, `keyword`, …). Left out: the defaults.',
});

export const BulkUpdateInput = z
  .object({
    all: z.literal(true).optional().openapi({ description: 'Every connected site.' }),
    tag: TagFilter.openapi({ description: 'The sites carrying all these tags.' }),
    sites: z.array(SiteId).min(1).max(MAX_SITES_PER_REQUEST).optional().openapi({ description: 'These sites (ids).' }),
    items: z.array(SelectedItem).min(1).max(MAX_ITEMS_PER_REQUEST).optional().openapi({
      description:
        'What to update; by default every pending plugin and theme update. Core and translations only when named here.',
    }),
    exclude: z
      .object({
        sites: z.array(SiteId).max(MAX_SITES_PER_REQUEST).optional(),
        items: z.array(SelectedItem).max(MAX_ITEMS_PER_REQUEST).optional(),
      })
      .optional()
      .openapi({ description: 'Sites and items left out of the selection.' }),
    dryRun: z.boolean().optional().openapi({ description: 'Answer the per-site plan and change nothing.' }),
    safe: z.boolean().optional().openapi({
      description:
        'Apply each plugin, theme and core update as a safe update (health checks before and after, screenshots, a restore point, a rollback when the site broke; see docs/safe-updates.md). Default false.',
    }),
    checks: CHECKS,
    notAfter: z.iso.datetime({ offset: true }).optional().openapi({
      description: 'Sites not started by then are skipped (`window-closed`); running ones finish.',
    }),
  })
  .openapi('BulkUpdateInput');
export type BulkUpdateInput = z.infer<typeof BulkUpdateInput>;

const ItemSchema = z.object({
  type: z.enum(updateItemTypes),
  slug: z.string().nullable(),
  fromVersion: z.string().nullable(),
  toVersion: z.string().nullable().openapi({ description: 'Expected before it ran; what the site reports after.' }),
  state: z.enum(['pending', 'succeeded', 'failed', 'skipped']),
  reason: z.string().nullable().openapi({
    description:
      'Why it failed or was skipped (`site-down-before-update`: a safe update found the site already down before updating it, and updated nothing). On a `succeeded` item, `visual-change`: a safe update kept it, but a page looks different beyond the threshold (a warning).',
  }),
  message: z.string().nullable(),
  safeUpdateId: z.string().nullable().optional().openapi({
    description:
      'The safe update an item was under way as when the daemon stopped (its report: `GET /api/sites/{siteId}/safe-updates/{id}`): it went on after the restart, and the item follows how it ended.',
  }),
});

const siteUpdateStates = ['queued', 'running', 'succeeded', 'failed', 'skipped', 'cancelled'] as const;

export const BulkUpdateRunSchema = z
  .object({
    job: JobSchema,
    dryRun: z.boolean(),
    safe: z.boolean(),
    checks: SafeUpdatePolicySchema.nullable().openapi({
      description: 'The checks of its safe updates, as asked (defaults filled in); null when none were given.',
    }),
    trigger: z.object({ kind: z.enum(triggerKinds), id: z.string().nullable() }),
    notAfter: z.string().nullable(),
    appliedAs: z.string().nullable().openapi({
      description:
        'A preview’s: the bulk update it was applied as (a preview is applied once); null before, and for a bulk update.',
    }),
    progress: z
      .object({
        total: z.number().int(),
        done: z.number().int(),
        succeeded: z.number().int(),
        failed: z.number().int(),
        skipped: z.number().int(),
        cancelled: z.number().int(),
      })
      .openapi({ description: '`done` of `total` sites finished, by how they ended.' }),
    sites: z.array(
      z.object({
        siteId: z.string(),
        url: z.string(),
        jobId: z
          .string()
          .nullable()
          .openapi({ description: 'The site’s child job (`site-update`); null in a dry run.' }),
        state: z.enum(siteUpdateStates),
        reason: z.string().nullable(),
        message: z.string().nullable(),
        startedAt: z.string().nullable(),
        finishedAt: z.string().nullable(),
        items: z.array(ItemSchema),
      }),
    ),
  })
  .openapi('BulkUpdateRun');
export type BulkUpdateRun = z.infer<typeof BulkUpdateRunSchema>;

export const ApplyPreviewInput = z
  .object({
    safe: z.boolean().optional().openapi({
      description:
        'Apply each plugin, theme and core update as a safe update (as in `BulkUpdateInput`). Default false.',
    }),
    checks: SafeUpdateChecksInput.optional().openapi({
      description: 'As in `BulkUpdateInput`; left out: the preview’s own `checks`, if it had any.',
    }),
  })
  .openapi('ApplyPreviewInput');

export const BulkRunParams = z.object({
  jobId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'jobId', in: 'path' }, example: 'bulk_01jc0z6x8m3yq4x0h7a9b2c3d4' }),
});

const HistoryFilters = {
  type: z.enum(updateItemTypes).optional(),
  slug: z.string().min(1).max(200).optional(),
  result: z.enum(updateResults).optional(),
  since: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ description: 'Attempts started at or after this time.' }),
  until: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Attempts started before this time.' }),
  triggerKind: z
    .enum(triggerKinds)
    .optional()
    .openapi({ description: 'Who asked: `user` (the dashboard), `policy` or `request` (an API token).' }),
  triggerId: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({ description: 'Which user, policy or token asked (its id).' }),
};
export const SiteHistoryQuery = PaginationQuery.extend(HistoryFilters);
export const FleetHistoryQuery = PaginationQuery.extend({
  ...HistoryFilters,
  siteId: SiteId.optional(),
  tag: TagFilter,
});

export const HistoryEntrySchema = z
  .object({
    id: z.string(),
    siteId: z.string(),
    type: z.enum(updateItemTypes),
    slug: z.string().nullable(),
    fromVersion: z.string().nullable(),
    toVersion: z.string().nullable(),
    startedAt: z.string(),
    finishedAt: z.string().nullable(),
    trigger: z.object({ kind: z.enum(triggerKinds), id: z.string().nullable() }),
    jobId: z.string().nullable().openapi({ description: 'The bulk job the attempt was part of.' }),
    safeUpdateId: z.string().nullable().openapi({
      description: 'The safe update the attempt ran as (its report: `GET /api/sites/{siteId}/safe-updates/{id}`).',
    }),
    restorePoint: z.object({ id: z.string(), target: z.string() }).nullable().openapi({
      description:
        'The restore point a plain plugin, theme or core update took before it (a copy of the item’s folder; for core, of `wp-admin`, `wp-includes` and the root PHP files): `POST /api/sites/{siteId}/updates/history/{entryId}/rollback` puts it back. Null: none was taken.',
    }),
    rollbackOf: z.string().nullable().openapi({
      description: 'On the entry of a rollback: the entry (update) it rolled back.',
    }),
    result: z.enum(updateResults),
    reason: z.string().nullable().openapi({
      description:
        'Why the attempt ended as it did: a problem name (`site-operation-failed`, `no-update-available`, `update-rolled-back`, …). On a `succeeded` plain update, `update-applied-site-unhealthy`: the new version is on the site’s disk (`toVersion`), but the site failed after it (`error` says how; a bulk update asks the site’s front page once after a site’s plain items); roll it back with `POST /api/sites/{siteId}/updates/history/{entryId}/rollback`. On a `succeeded` safe update, `visual-change`: kept, but a page looks different beyond the threshold (a warning). On a `skipped` one, `site-down-before-update`: the site already failed its checks before the update, so nothing was updated.',
    }),
    error: z.string().nullable(),
  })
  .openapi('UpdateHistoryEntry');

export const HistoryEntryParams = z.object({
  siteId: SiteId.openapi({ param: { name: 'siteId', in: 'path' } }),
  entryId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'entryId', in: 'path' }, example: 'upd_01jc0z6x8m3yq4x0h7a9b2c3d4' }),
});

export const HistoryRollbackSchema = z
  .object({
    entry: HistoryEntrySchema.openapi({ description: 'The update rolled back.' }),
    rollback: HistoryEntrySchema.openapi({
      description: 'The rollback’s own history entry (`rollbackOf`: the update).',
    }),
  })
  .openapi('UpdateHistoryRollback');
