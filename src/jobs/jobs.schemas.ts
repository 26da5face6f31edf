import { z } from '@hono/zod-openapi';
import { PaginationQuery } from '../http/pagination.js';
import { parseStoredOrNull } from '../shared/stored-json.js';
import { jobStates, type JobRow } from './jobs.table.js';

export const JobParams = z.object({
  jobId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'jobId', in: 'path' }, example: 'bkp_01jc0z6x8m3yq4x0h7a9b2c3d4' }),
});

/** Every kind a feature registers with the job runner (test/jobs/job-kinds.test.ts keeps this true). */
const JOB_KINDS =
  '`backup`, `restore`, `backup-verify`, `backup-repair`, `target-prune` (backups), `audit` (performance), ' +
  '`bulk-update` with its `site-update` and `safe-site-update` per site, `safe-update`, `fleet-action`';

export const JobListQuery = PaginationQuery.extend({
  siteId: z.string().min(1).max(64).optional().openapi({ description: 'Only the jobs of this site.' }),
  kind: z
    .string()
    .min(1)
    .max(40)
    .optional()
    .openapi({ description: `Only jobs of this kind: ${JOB_KINDS}.` }),
  state: z.enum(jobStates).optional().openapi({ description: 'Only jobs in this state.' }),
});

export const JobSchema = z
  .object({
    id: z.string().openapi({ description: 'The id of the job, which is also the id of its backup, restore or audit.' }),
    kind: z.string().openapi({ description: `What the job does: ${JOB_KINDS}.` }),
    siteId: z.string().nullable(),
    state: z.enum(jobStates).openapi({
      description:
        '`queued`, `running`, then `succeeded`, `failed` (with a `reason`) or `cancelled`. A job the daemon was stopped during is `failed` with reason `interrupted`.',
    }),
    reason: z.string().nullable().openapi({
      description: 'Why it failed or stopped: `interrupted`, `cancelled`, or the problem name of the failure.',
    }),
    message: z.string().nullable(),
    progress: z
      .record(z.string(), z.unknown())
      .openapi({ description: 'What the kind reports as it runs (a backup: files and bytes done).' }),
    params: z
      .record(z.string(), z.unknown())
      .openapi({ description: 'What the job was asked to do (a restore: its `backupId`).' }),
    attempts: z.number().int().openapi({ description: 'How many times it started running.' }),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
  })
  .openapi('Job');

// Any kind's params and progress are a JSON object; one that cannot be read shows as {} (the job's reason says why).
const JsonObject = z.record(z.string(), z.unknown());
const parsed = (json: string): Record<string, unknown> => parseStoredOrNull(JsonObject, json) ?? {};
const iso = (date: Date | null) => date?.toISOString() ?? null;

export const jobView = (row: JobRow): z.infer<typeof JobSchema> => ({
  id: row.id,
  kind: row.kind,
  siteId: row.siteId,
  state: row.state,
  reason: row.reason,
  message: row.message,
  progress: parsed(row.progress),
  params: parsed(row.params),
  attempts: row.attempts,
  createdAt: row.createdAt.toISOString(),
  startedAt: iso(row.startedAt),
  finishedAt: iso(row.finishedAt),
});
