import { defineProblem } from '../shared/errors.js';

export const updateHistoryProblems = {
  // The reasons a safe update that did not keep its update ended with (a bulk item's outcome, the history, update.failed).
  rolledBack: defineProblem('update-rolled-back', 502, 'The update broke the site and was rolled back'),
  rollbackFailed: defineProblem(
    'update-rollback-failed',
    502,
    'The update broke the site and the rollback did not heal it',
  ),
  notUpdatedSafely: defineProblem('update-not-safe', 409, 'The safe update did not update the site'),
  // Rolling back a plain update from its history entry (POST …/updates/history/{entryId}/rollback).
  entryNotFound: defineProblem('update-history-entry-not-found', 404, 'No such update history entry'),
  noRestorePoint: defineProblem('no-restore-point', 409, 'The update took no restore point to roll back to'),
  alreadyRolledBack: defineProblem('already-rolled-back', 409, 'The update was already rolled back'),
  stillRunning: defineProblem('update-still-running', 409, 'The update has not finished yet'),
};

/**
 * A safe update that did not keep its update, as the problem it ends with (rolled back, its
 * rollback failed, or not updated) and the message naming it, for its outcome and its history row.
 */
export function notKeptProblem(report: { id: string; status: string; reason: string | null; message: string | null }) {
  const problem =
    report.status === 'rolled-back'
      ? updateHistoryProblems.rolledBack
      : report.status === 'rollback-failed'
        ? updateHistoryProblems.rollbackFailed
        : updateHistoryProblems.notUpdatedSafely;
  const message = `safe update ${report.id}: ${report.status}${report.reason ? ` (${report.reason})` : ''}${report.message ? `: ${report.message}` : ''}`;
  return { problem, message };
}
