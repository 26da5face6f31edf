import { z } from 'zod';
import {
  CANCELLED_MESSAGE,
  jobEvent,
  wasCancelled,
  type JobContext,
  type JobEvent,
  type Settlement,
} from '../jobs/job-kind.js';
import type { JobRow } from '../jobs/jobs.table.js';
import { ActorSchema, type Actor } from '../shared/actor.js';
import { isAppError } from '../shared/errors.js';
import type { BackupRow } from './backups.table.js';
import { offsiteProblems } from './offsite/offsite.errors.js';
import type { VerifyProgress, VerifyResult } from './verify.js';

/**
 * What a verify or repair job (verify-jobs.ts) keeps and tells: the params its row holds, the
 * progress it reports as it reads, the outcome it ends with and the events it sends.
 */

/** How often a running verify tells the job runner its progress (which writes it to its job row). */
const PROGRESS_EVERY_MS = 500;
/** Paths an event names at most (the job's result lists more). */
const EVENT_PATHS = 10;

/** What a repair job's row holds in `params`; a verify's also its `sample`. */
export const RepairParams = z.object({ backupId: z.string(), target: z.string(), requestedBy: ActorSchema.nullable() });
export const VerifyParams = RepairParams.extend({ sample: z.number() });
export type VerifyParams = z.infer<typeof VerifyParams>;
export type RepairParams = z.infer<typeof RepairParams>;

/** What a finished verify job holds in its `progress`: the last counts and the result. */
export type VerifyOutcome = VerifyProgress & { result: VerifyResult & { target: string; sample: number } };

export const requested = (by: Actor | null) => ({ requestedByKind: by?.kind ?? null, requestedById: by?.id ?? null });

/** Progress told at most every PROGRESS_EVERY_MS. */
export function progressWriter(context: JobContext, extra: Record<string, unknown> = {}) {
  let last = 0;
  return (progress: VerifyProgress) => {
    const now = Date.now();
    if (now - last < PROGRESS_EVERY_MS) return;
    last = now;
    context.progress({ ...progress, ...extra });
  };
}

export const outcomeOf = (row: BackupRow, result: VerifyOutcome['result']): VerifyOutcome => ({
  filesChecked: row.files,
  files: row.files,
  tablesChecked: row.tables,
  tables: row.tables,
  objectsChecked: result.objectsChecked,
  bytesChecked: result.bytesChecked,
  result,
});

/** `backup.damaged`: what a verify or repair found missing or corrupt on `target`, and what is lost with it. */
export function damagedEvent(
  job: JobRow,
  row: BackupRow,
  target: string,
  result: VerifyResult,
  by: Actor | null,
): JobEvent {
  return jobEvent('backup.damaged', {
    jobId: job.id,
    siteId: row.siteId,
    backupId: row.id,
    target,
    missingObjects: result.missing.length,
    corruptObjects: result.corrupt.length,
    everythingLost: result.lost.everything,
    lostFiles: result.lost.files,
    lostFilePaths: result.lost.filePaths.slice(0, EVENT_PATHS),
    lostTables: result.lost.tableNames,
    ...requested(by),
  });
}

/** A verify or repair job that could not run to its end (`backup.verify-failed`). */
export function verifyFailedEvent(job: JobRow, params: RepairParams | null, reason: string, message: string): JobEvent {
  return jobEvent('backup.verify-failed', {
    jobId: job.id,
    kind: job.kind,
    siteId: job.siteId,
    backupId: params?.backupId ?? null,
    target: params?.target ?? null,
    reason,
    message,
  });
}

/** How a job that threw ends: cancelled, interrupted by a stop, or failed with the problem's name. */
export function failed(job: JobRow, signal: AbortSignal, error: unknown, params: RepairParams | null): Settlement {
  if (wasCancelled(signal))
    return { events: [], outcome: { state: 'cancelled', reason: 'cancelled', message: CANCELLED_MESSAGE } };
  const reason = signal.aborted
    ? 'interrupted'
    : isAppError(error)
      ? error.problem.name
      : offsiteProblems.targetFailed.name;
  const message = signal.aborted ? 'the daemon stopped while it ran; nothing was changed' : (error as Error).message;
  return {
    outcome: { state: 'failed', reason, message },
    events: [verifyFailedEvent(job, params, reason, message)],
    interrupted: signal.aborted,
  };
}
