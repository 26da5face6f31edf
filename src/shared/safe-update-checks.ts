import { z } from '@hono/zod-openapi';

/**
 * How a safe update checks the site and when it rolls back: the one definition, for a single safe update's `policy`,
 * a bulk update's `checks` and an update policy's `checks` (docs/safe-updates.md). Here, in the base layer, because
 * update policies and safe updates are features of the same tier and do not import each other.
 */

/** How long the backup before the update waits for one of the site's own already under way, unless the policy says. */
export const DEFAULT_BACKUP_WAIT_MINUTES = 30;

/**
 * How a safe update checks the site and when it rolls back: one definition, for a single safe update
 * (`policy`), a bulk update's and an update policy's `checks`. Only the default of `visual.rollback`
 * differs: off when someone is watching (a single or bulk safe update), on for unattended runs
 * (an update policy's).
 */
const checksSchema = (visualRollbackByDefault: boolean) =>
  z.object({
    urls: z
      .array(
        z
          .string()
          .regex(/^\/[^\s#]{0,499}$/, 'a path on the site such as /shop/')
          .openapi({ example: '/contact/' }),
      )
      .max(10)
      .default([])
      .openapi({ description: 'Paths checked besides the home page (same site), at most 10.' }),
    keyword: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .openapi({ description: 'Text the home page must contain, before and after.' }),
    settleMs: z
      .number()
      .int()
      .min(0)
      .max(60_000)
      .default(2_000)
      .openapi({ description: 'Wait after the update before the first after-check.' }),
    attempts: z
      .number()
      .int()
      .min(1)
      .max(10)
      .default(3)
      .openapi({ description: 'After-checks tried before the site counts as broken.' }),
    retryDelayMs: z.number().int().min(0).max(60_000).default(3_000),
    checkTimeoutMs: z
      .number()
      .int()
      .min(1_000)
      .max(60_000)
      .default(15_000)
      .openapi({ description: 'Time limit of each page, REST and connector check.' }),
    backup: z.boolean().default(true).openapi({
      description:
        'Take a (incremental) backup before the update, restored when putting the previous version back does not heal the site.',
    }),
    backupWaitMinutes: z.number().int().min(0).max(240).default(DEFAULT_BACKUP_WAIT_MINUTES).openapi({
      description:
        'How long the backup before the update waits for a backup or restore of the site already under way (its scheduled backup), which it then takes its own after; still running then, the safe update ends `failed` (`backup-in-progress`) without updating. 0: does not wait.',
    }),
    visual: z
      .object({
        enabled: z
          .boolean()
          .default(true)
          .openapi({ description: 'Take screenshots before and after, and compare them.' }),
        threshold: z
          .number()
          .min(0)
          .max(1)
          .default(0.03)
          .openapi({ description: 'Share of pixels (0–1) that may change on a page before the update is flagged.' }),
        rollback: z
          .boolean()
          .default(visualRollbackByDefault)
          .openapi({
            description: `Roll back a flagged update (otherwise it is kept, flagged in the report: a warning). Default ${visualRollbackByDefault ? 'on for unattended runs (update policies)' : 'off'}.`,
          }),
      })
      .prefault({}),
  });

/** How a safe update checks the site and when it rolls back (a single or bulk safe update: no rollback on a visual change unless asked). */
export const SafeUpdatePolicySchema = checksSchema(false).openapi('SafeUpdatePolicy');
export type SafeUpdatePolicy = z.infer<typeof SafeUpdatePolicySchema>;

/** An update policy's `checks`: the same object, rolling back on a visual change by default (nobody watches the run). */
export const UnattendedChecksSchema = checksSchema(true).openapi('UnattendedSafeUpdateChecks', {
  description:
    'The checks of the safe updates an unattended run makes: as `SafeUpdatePolicy`, but `visual.rollback` defaults to true.',
});

/** A `checks` (or single safe update `policy`) in a request: any field left out takes its default. */
export const SafeUpdateChecksInput = SafeUpdatePolicySchema.partial();
