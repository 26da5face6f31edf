// What a safe update tells the job runner of its job (kind `safe-update`; docs/jobs.md, "Who writes
// a job row"), from its `safe_updates` row: the phase it is in, and how it ended. The values
// drizzle/0015's triggers wrote to its job row until 0034.
import type { JobOutcome } from '../jobs/job-kind.js';
import type { SafeUpdatePhase, SafeUpdateRow } from './safe-updates.table.js';

/** What a safe update's job row holds in `progress`: the phase it is in. */
export const safeUpdateJobProgress = (phase: SafeUpdatePhase) => ({ phase });

/**
 * How a safe update's job ended, from its decided row: `kept` succeeded; `rolled-back` and
 * `rollback-failed` failed with that decision as the reason (the row's reason says why); `failed`
 * failed with its reason, or was cancelled (`cancelled`).
 */
export function safeUpdateOutcome(row: SafeUpdateRow): JobOutcome {
  const decided = row.status === 'rolled-back' || row.status === 'rollback-failed';
  return {
    state: row.status === 'kept' ? 'succeeded' : row.reason === 'cancelled' ? 'cancelled' : 'failed',
    reason: decided ? row.status : row.reason,
    message: row.message,
    progress: safeUpdateJobProgress(row.phase),
    finishedAt: row.finishedAt ?? undefined,
  };
}
