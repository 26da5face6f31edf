/**
 * What the planner, the coordinator and the site runner share about a bulk update's job rows: their kinds, the run's
 * counts of its sites, and how a row whose stored data cannot be read ends. The job runner writes them all.
 */
import type { Logger } from 'pino';
import type { JobOutcome } from '../jobs/job-kind.js';
import type { JobStore } from '../jobs/job-store.js';
import type { JobRow } from '../jobs/jobs.table.js';
import { isProblem } from '../shared/errors.js';
import { storedDataProblems } from '../shared/stored-json.js';
import { runView } from './bulk-run-view.js';

export const BULK = 'bulk-update';
export const CHILD = 'site-update';
/** A site's updates as safe updates: each waits for its own backup job, so it cannot hold the site's turn. */
export const SAFE_CHILD = 'safe-site-update';
export const BULK_UPDATE_KINDS = [BULK, CHILD, SAFE_CHILD] as const;

/** What the bulk module reads of the job rows, on either dialect (the job runner writes them). */
export type JobRowsRead = Pick<JobStore, 'find' | 'list'>;

/** How a site update ended, as its bulk job counts it. */
export type ChildEnd = Pick<JobRow, 'state' | 'reason' | 'progress'>;

/** A bulk job's counts of its sites (its `progress` once started). */
export function progressOf(children: Pick<JobRow, 'state' | 'reason' | 'progress'>[]) {
  const counts = { total: children.length, done: 0, succeeded: 0, failed: 0, skipped: 0, cancelled: 0 };
  for (const child of children) {
    const state = runView.siteState(child);
    if (state === 'queued' || state === 'running') continue;
    counts.done++;
    counts[state]++;
  }
  return counts;
}

/**
 * A job whose stored params cannot be read ends failed with that reason (`stored-data-unreadable`), never crashed:
 * the outcome the job runner writes (logged here).
 */
export function unreadable(
  logger: Logger,
  row: Pick<JobRow, 'id'>,
  error: unknown,
): JobOutcome & { state: 'failed'; reason: string; message: string } {
  if (!isProblem(error, storedDataProblems.unreadable)) throw error;
  logger.error({ err: error, jobId: row.id }, 'a job’s stored data could not be read');
  return { state: 'failed', reason: error.problem.name, message: error.detail };
}
