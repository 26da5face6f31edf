import type { Db } from '../../src/db/database.js';
import { createJobsRepository } from '../../src/jobs/jobs.repository.js';
import type { JobState } from '../../src/jobs/jobs.table.js';

/** A backup's, restore's or audit's row a test writes directly, as a daemon (one that crashed, say) left it. */
interface FeatureRow {
  id: string;
  siteId: string;
  status: string;
  reason?: string | null;
  createdAt?: Date;
  queuedAt?: Date;
  startedAt?: Date | null;
  finishedAt?: Date | null;
}

const stateOf = (status: string, reason: string | null): JobState =>
  status === 'queued' || status === 'running'
    ? status
    : status === 'completed' || status === 'partial'
      ? 'succeeded'
      : reason === 'cancelled'
        ? 'cancelled'
        : 'failed';

/**
 * Writes the job row the job runner keeps beside such a row (a test that sets up a state by hand:
 * the job runner, not a trigger, writes job rows since drizzle/0033), so recovery and the jobs list find it.
 */
export function insertJobRowOf(db: Db, kind: 'backup' | 'restore' | 'audit', row: FeatureRow): void {
  createJobsRepository({ db }).insert({
    id: row.id,
    kind,
    siteId: row.siteId,
    state: stateOf(row.status, row.reason ?? null),
    reason: row.reason ?? null,
    attempts: row.startedAt || row.status === 'running' ? 1 : 0,
    createdAt: row.createdAt ?? row.queuedAt ?? new Date(),
    startedAt: row.startedAt ?? null,
    finishedAt: row.finishedAt ?? null,
  });
}
