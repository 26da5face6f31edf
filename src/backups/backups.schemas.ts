import { z } from '@hono/zod-openapi';
import { SiteIdPathParam } from '../sites/index.js';
import { backupKinds, backupStatuses, jobStatuses, type BackupRow, type RestoreRow } from './backups.table.js';
import { JobSchema } from '../jobs/jobs.schemas.js';

const JobId = (name: string, example: string) =>
  z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name, in: 'path' }, example });
export const BackupParams = SiteIdPathParam.extend({ backupId: JobId('backupId', 'bkp_01jc0z6x8m3yq4x0h7a9b2c3d4') });
export const RestoreParams = SiteIdPathParam.extend({
  restoreId: JobId('restoreId', 'rst_01jc0z6x8m3yq4x0h7a9b2c3d4'),
});

const failureFields = {
  reason: z.string().nullable().openapi({
    description:
      'Why it failed: `interrupted` (the daemon stopped while it ran), `pre-restore-backup-failed`, or the problem name of the failure (`site-unreachable`, `connector-missing`, `backup-unsafe-path`, …).',
  }),
  error: z.string().nullable(),
};
const timings = { createdAt: z.string(), startedAt: z.string().nullable(), finishedAt: z.string().nullable() };
const iso = (date: Date | null) => date?.toISOString() ?? null;

export const BackupSchema = z
  .object({
    id: z.string(),
    siteId: z.string(),
    kind: z.enum(backupKinds).openapi({
      description:
        '`manual`, `scheduled`, `pre_restore` (taken just before a restore, so it can be undone) or `pre_update` (taken by a safe update before it updates, its last resort).',
    }),
    status: z.enum(backupStatuses).openapi({
      description:
        '`partial`: the local store holds the backup whole, but an offsite target did not get its copy (`reason` `backup-target-failed`, `error` names the target). It can be restored and downloaded like a `completed` one.',
    }),
    ...failureFields,
    targets: z.array(z.string()).openapi({
      description:
        'The targets holding the backup: `local` (the data directory), then offsite ones (SITEWARDEN_TARGETS).',
    }),
    progress: z.object({ files: z.number(), filesDone: z.number(), tables: z.number(), tablesDone: z.number() }),
    rows: z.number().int(),
    bytes: z.object({
      total: z.number().openapi({ description: 'The site’s files as they are (uncompressed).' }),
      transferred: z.number().openapi({ description: 'Downloaded from the site by this backup (files and SQL).' }),
      stored: z.number().openapi({
        description: 'Compressed bytes this backup added to the store (content already stored is not stored again).',
      }),
    }),
    manifest: z.string().nullable().openapi({ description: 'SHA-256 of the backup’s manifest object once completed.' }),
    retryOf: z.string().nullable().openapi({
      description:
        'The `interrupted` backup this one retries: the daemon retries an interrupted backup once, at its next start.',
    }),
    ...timings,
  })
  .openapi('Backup');

export const RestoreSchema = z
  .object({
    id: z.string(),
    siteId: z.string(),
    backupId: z.string(),
    sourceTarget: z.string().nullable().openapi({
      description:
        'The offsite target the restore reads, when one was named (a restore from a target); null: the local store while it holds the backup, else the first of its targets that does.',
    }),
    preRestoreBackupId: z
      .string()
      .nullable()
      .openapi({ description: 'The backup of the site taken just before restoring.' }),
    status: z.enum(jobStatuses),
    ...failureFields,
    filesRestored: z.number(),
    filesDeleted: z.number(),
    tablesRestored: z.number(),
    bytesTransferred: z.number(),
    ...timings,
  })
  .openapi('Restore');

/** keepDaily, keepWeekly, keepMonthly, keepYearly, each described by its period. */
function retentionCounts<T extends z.ZodType>(field: (period: string, variable: string) => T) {
  return {
    keepDaily: field('days', 'SITEWARDEN_BACKUP_KEEP_DAILY'),
    keepWeekly: field('ISO weeks', 'SITEWARDEN_BACKUP_KEEP_WEEKLY'),
    keepMonthly: field('months', 'SITEWARDEN_BACKUP_KEEP_MONTHLY'),
    keepYearly: field('years', 'SITEWARDEN_BACKUP_KEEP_YEARLY'),
  };
}

const retentionCount = (period: string, variable: string) =>
  z
    .number()
    .int()
    .min(0)
    .max(10_000)
    .nullable()
    .optional()
    .openapi({
      description: `Also keep the newest backup of each of the last this many ${period} that have one (0–10000); null: the site's tags, then \`${variable}\`.`,
    });

export const BackupSettingsSchema = z
  .object({
    enabled: z.boolean().openapi({
      description: 'false: the site gets no scheduled backups (manual ones still run, and retention still applies).',
    }),
    intervalHours: z.number().int().openapi({
      description:
        'Hours between scheduled backups (0: none). Each site has a fixed offset into its interval, so sites are spread over it.',
    }),
    keepLast: z.number().int().openapi({ description: 'Completed backups kept: the newest this many.' }),
    keepDays: z.number().int().openapi({
      description:
        'Also kept: every completed backup younger than this many days, a minimum age before anything is deleted (0: none).',
    }),
    ...retentionCounts((period) =>
      z
        .number()
        .int()
        .openapi({
          description: `Also kept: the newest backup of each of the last this many ${period} that have one (0: none).`,
        }),
    ),
    nextScheduledAt: z.string().nullable().openapi({
      description:
        'When the next scheduled backup falls due (at most ten minutes later it is queued); null when none is scheduled.',
    }),
  })
  .openapi('BackupSettings');

export const BackupSettingsInput = z
  .object({
    enabled: z.boolean().optional(),
    intervalHours: z
      .number()
      .int()
      .min(1)
      .max(8760)
      .nullable()
      .optional()
      .openapi({ description: 'Hours between scheduled backups (1–8760); null: `SITEWARDEN_BACKUP_INTERVAL_HOURS`.' }),
    keepLast: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .nullable()
      .optional()
      .openapi({ description: 'Completed backups kept, newest first (1–10000); null: `SITEWARDEN_BACKUP_KEEP_LAST`.' }),
    keepDays: z.number().int().min(0).max(36_500).nullable().optional().openapi({
      description:
        'Also keep completed backups younger than this many days (0–36500); null: `SITEWARDEN_BACKUP_KEEP_DAYS`.',
    }),
    ...retentionCounts((period, variable) => retentionCount(period, variable)),
  })
  .strict()
  .openapi('BackupSettingsInput');

/** The retention a tag gives its sites (`PUT /api/backup-retention/{tag}`); a field left out or null follows the defaults. */
export const TagRetentionInput = z
  .object({
    keepLast: z.number().int().min(1).max(10_000).nullable().optional(),
    keepDays: z.number().int().min(0).max(36_500).nullable().optional(),
    ...retentionCounts((period, variable) => retentionCount(period, variable)),
  })
  .strict()
  .openapi('TagRetentionInput');

export const TagRetentionSchema = z
  .object({
    tag: z.string(),
    keepLast: z.number().int().nullable(),
    keepDays: z.number().int().nullable(),
    keepDaily: z.number().int().nullable(),
    keepWeekly: z.number().int().nullable(),
    keepMonthly: z.number().int().nullable(),
    keepYearly: z.number().int().nullable(),
    updatedAt: z.string(),
  })
  .openapi('TagRetention');

export const RetentionOverviewSchema = z
  .object({
    defaults: z.object({
      keepLast: z.number().int(),
      keepDays: z.number().int(),
      keepDaily: z.number().int(),
      keepWeekly: z.number().int(),
      keepMonthly: z.number().int(),
      keepYearly: z.number().int(),
    }),
    tags: z.array(TagRetentionSchema),
  })
  .openapi('BackupRetention');

export const VerifyQuery = z.object({
  target: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,31}$/)
    .optional()
    .openapi({ description: 'The target to read the backup from: `local` (default) or an offsite target’s name.' }),
  sample: z.coerce.number().gt(0).max(100).optional().openapi({
    description:
      'Read back only this percent (0–100] of the backup’s files and table batches, picked at random (the manifest is always read whole); default 100.',
  }),
});

export const RepairQuery = VerifyQuery.pick({ target: true });

const LostSchema = z
  .object({
    everything: z.boolean().openapi({
      description:
        'The manifest itself (or a part of its file list) cannot be read: which files are lost is not known.',
    }),
    files: z.number().int().openapi({ description: 'Site files whose content the backup can no longer give back.' }),
    filePaths: z.array(z.string()).openapi({ description: 'The first 50 of them, by path.' }),
    tables: z.number().int().openapi({ description: 'Database tables with a missing or corrupt batch of rows.' }),
    tableNames: z.array(z.string()).openapi({ description: 'The first 50 of them.' }),
  })
  .openapi('BackupLostContent');

const VerifySchema = z
  .object({
    backupId: z.string(),
    target: z.string(),
    sample: z.number().openapi({ description: 'The percent of entries read back (100: all).' }),
    ok: z.boolean(),
    objectsChecked: z.number(),
    bytesChecked: z.number(),
    missing: z.array(z.string()).openapi({ description: 'Content hashes of objects the target does not hold.' }),
    corrupt: z.array(z.string()).openapi({
      description: 'Content hashes of objects the target holds that fail authentication or their hash.',
    }),
    problems: z.array(z.string()).openapi({
      description: 'One line per problem, naming the object (and, on an offsite target, its key in the bucket).',
    }),
    lost: LostSchema,
  })
  .openapi('BackupVerification');

/** A verify job as its answer and `GET /api/jobs/{jobId}` give it: its progress, then its result. */
export const VerifyJobSchema = JobSchema.extend({
  progress: z
    .object({
      filesChecked: z.number().int().optional(),
      files: z.number().int().optional(),
      tablesChecked: z.number().int().optional(),
      tables: z.number().int().optional(),
      objectsChecked: z.number().int().optional(),
      bytesChecked: z.number().int().optional(),
      result: VerifySchema.optional().openapi({ description: 'Once the job has `succeeded`: the verification.' }),
    })
    .catchall(z.unknown())
    .openapi({ description: 'Files and tables checked of how many as it runs; then `result`.' }),
}).openapi('VerifyJob');

export function backupView(row: BackupRow): z.infer<typeof BackupSchema> {
  return {
    id: row.id,
    siteId: row.siteId,
    kind: row.kind,
    status: row.status,
    reason: row.reason,
    error: row.error,
    targets: row.targets ?? (row.manifestHash ? ['local'] : []),
    progress: { files: row.files, filesDone: row.filesDone, tables: row.tables, tablesDone: row.tablesDone },
    rows: row.rows,
    bytes: { total: row.bytesTotal, transferred: row.bytesTransferred, stored: row.bytesStored },
    manifest: row.manifestHash,
    retryOf: row.retryOf,
    createdAt: row.createdAt.toISOString(),
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
  };
}

export function restoreView(row: RestoreRow): z.infer<typeof RestoreSchema> {
  return {
    id: row.id,
    siteId: row.siteId,
    backupId: row.backupId,
    sourceTarget: row.sourceTarget,
    preRestoreBackupId: row.preRestoreBackupId,
    status: row.status,
    reason: row.reason,
    error: row.error,
    filesRestored: row.filesRestored,
    filesDeleted: row.filesDeleted,
    tablesRestored: row.tablesRestored,
    bytesTransferred: row.bytesTransferred,
    createdAt: row.createdAt.toISOString(),
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
  };
}
