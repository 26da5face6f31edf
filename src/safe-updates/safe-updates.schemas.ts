import { z } from '@hono/zod-openapi';
import { parseStored } from '../shared/stored-json.js';
import { SiteIdPathParam, SlugPattern } from '../sites/index.js';
import { safeUpdatePhases, safeUpdateStatuses, type SafeUpdateRow } from './safe-updates.table.js';

// The checks' one definition lives in the base layer: update policies (a feature of the same tier) take it too.
export {
  DEFAULT_BACKUP_WAIT_MINUTES,
  SafeUpdateChecksInput,
  SafeUpdatePolicySchema,
  type SafeUpdatePolicy,
} from '../shared/safe-update-checks.js';
import { SafeUpdatePolicySchema, type SafeUpdatePolicy } from '../shared/safe-update-checks.js';

const CheckSchema = z.object({
  name: z.enum(['page', 'rest', 'connector']),
  url: z.string().optional(),
  ok: z.boolean(),
  status: z.number().int().optional().openapi({ description: 'HTTP status, for pages.' }),
  problem: z.string().optional().openapi({
    description: 'Why it failed: `fatal-error`, `keyword-missing`, a status, or the problem of the request.',
  }),
  durationMs: z.number(),
});
const HealthReportSchema = z
  .object({
    healthy: z.boolean(),
    at: z.string(),
    durationMs: z.number(),
    attempt: z.number().int(),
    checks: z.array(CheckSchema),
  })
  .openapi('HealthReport');
export type HealthReport = z.infer<typeof HealthReportSchema>;
export type Check = z.infer<typeof CheckSchema>;

const StepSchema = z.object({
  step: z.string().openapi({ description: '`restore-point`, `update`, `rollback`, `resumed`, …' }),
  ok: z.boolean(),
  at: z.string(),
  durationMs: z.number(),
  detail: z.string().optional(),
});
export type Step = z.infer<typeof StepSchema>;

const ScreenshotSchema = z.object({
  url: z.string(),
  before: z.string().nullable().openapi({ description: 'File name under …/screenshots/, e.g. `before-0.png`.' }),
  after: z.string().nullable(),
  diff: z.string().nullable().openapi({ description: 'Changed pixels in red over a faded copy of the page.' }),
  changedRatio: z.number().nullable().openapi({ description: 'Share of pixels that changed (0–1).' }),
});
export type Screenshot = z.infer<typeof ScreenshotSchema>;

/** What the flow knows of the item it updates, kept in the report so a resumed job knows it too. */
const ItemStateSchema = z.object({
  /** Plugin file (dir/file.php) or theme stylesheet. */
  target: z.string(),
  version: z.string(),
  active: z.boolean(),
});
export type ItemState = z.infer<typeof ItemStateSchema>;

/** What the report JSON column holds: every field the flow writes (a field left out here would be dropped on the next write). */
const SafeUpdateReportSchema = z.object({
  before: z.array(HealthReportSchema).optional(),
  after: z.array(HealthReportSchema).optional(),
  afterRollback: z.array(HealthReportSchema).optional(),
  steps: z.array(StepSchema).optional(),
  screenshots: z.array(ScreenshotSchema).optional(),
  /** True when a page changed beyond the policy's threshold. */
  visualChange: z.boolean().optional(),
  item: ItemStateSchema.optional(),
});
export type SafeUpdateReport = z.infer<typeof SafeUpdateReportSchema>;

/** A safe update's stored report and policy, read with the schemas they were written by. */
export const storedReport = (row: Pick<SafeUpdateRow, 'id' | 'report'>): SafeUpdateReport =>
  parseStored(SafeUpdateReportSchema, row.report, `the report of safe update ${row.id}`);
export const storedPolicy = (row: Pick<SafeUpdateRow, 'id' | 'policy'>): SafeUpdatePolicy =>
  parseStored(SafeUpdatePolicySchema, row.policy, `the policy of safe update ${row.id}`);

export const SafeUpdateSchema = z
  .object({
    id: z.string(),
    siteId: z.string(),
    type: z.enum(['plugin', 'theme', 'core']),
    slug: z.string(),
    status: z.enum(safeUpdateStatuses).openapi({
      description:
        '`kept` (updated and healthy), `rolled-back` (the after-checks failed; the previous version is back and healthy), `rollback-failed` (still broken after the rollback: someone must look), `failed` (not updated: see `reason`).',
    }),
    phase: z.enum(safeUpdatePhases),
    reason: z.string().nullable().openapi({
      description:
        'For `failed`: `site-down-before-update` (the site already failed its checks before the update, so nothing was updated: not the update’s fault), `no-update-available`, `rollback-path-unavailable`, `interrupted`, a problem name; for a rollback: what failed after the update (`fatal-error`, `update-failed`, `visual-change`, …).',
    }),
    message: z.string().nullable(),
    fromVersion: z.string().nullable(),
    toVersion: z.string().nullable(),
    policy: SafeUpdatePolicySchema,
    before: z.array(HealthReportSchema),
    after: z.array(HealthReportSchema),
    afterRollback: z.array(HealthReportSchema),
    steps: z.array(StepSchema),
    screenshots: z.array(ScreenshotSchema),
    visualChange: z.boolean().openapi({
      description:
        'A page changed beyond the policy’s visual threshold. On a `kept` update this is a warning: updated and healthy, but it looks different.',
    }),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
  })
  .openapi('SafeUpdate');

const iso = (date: Date | null) => date?.toISOString() ?? null;

export function safeUpdateView(row: SafeUpdateRow) {
  const report = storedReport(row);
  return {
    id: row.id,
    siteId: row.siteId,
    type: row.itemType,
    slug: row.slug,
    status: row.status,
    phase: row.phase,
    reason: row.reason,
    message: row.message,
    fromVersion: row.fromVersion,
    toVersion: row.toVersion,
    policy: storedPolicy(row),
    before: report.before ?? [],
    after: report.after ?? [],
    afterRollback: report.afterRollback ?? [],
    steps: report.steps ?? [],
    screenshots: report.screenshots ?? [],
    visualChange: report.visualChange ?? false,
    createdAt: row.createdAt.toISOString(),
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
  };
}

export const ItemParams = SiteIdPathParam.extend({
  slug: z
    .string()
    .regex(SlugPattern, 'a slug has only letters, digits, dots, dashes and underscores')
    .max(200)
    .openapi({ param: { name: 'slug', in: 'path' }, example: 'akismet' }),
});
export const ScreenshotParams = SiteIdPathParam.extend({
  safeUpdateId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'safeUpdateId', in: 'path' }, example: 'sup_01jc0z6x8m3yq4x0h7a9b2c3d4' }),
  name: z
    .string()
    .regex(/^(before|after|diff)-[0-9]{1,2}\.png$/, 'before-N.png, after-N.png or diff-N.png')
    .openapi({ param: { name: 'name', in: 'path' }, example: 'diff-0.png' }),
});
export const SafeUpdateParams = SiteIdPathParam.extend({
  safeUpdateId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'safeUpdateId', in: 'path' }, example: 'sup_01jc0z6x8m3yq4x0h7a9b2c3d4' }),
});
