import { defineProblem } from '../shared/errors.js';

export const backupsProblems = {
  notFound: defineProblem('backup-not-found', 404, 'The site has no such backup'),
  restoreNotFound: defineProblem('restore-not-found', 404, 'The site has no such restore'),
  inProgress: defineProblem('backup-in-progress', 409, 'A backup or restore of the site is already queued or running'),
  notCompleted: defineProblem('backup-not-completed', 409, 'The backup did not complete'),
  /** The site sent a table (schema, rows, counts or paging) that breaks the rules a backup holds it to. */
  tableInvalid: defineProblem('backup-table-invalid', 502, 'The site sent a table the backup cannot hold'),
  tableUnreadable: defineProblem('backup-table-unreadable', 502, 'The site could not read one of its tables'),
  /** A backup taken before dumps were written by the daemon holds a table it cannot write safely. */
  tableUnsafe: defineProblem('backup-table-unsafe', 422, 'The backup holds a table a safe SQL dump cannot carry'),
};

/** What a site that breaks its own listing's promises ends its backup with (src/backups/backup-limits.ts). */
export const backupContractProblems = {
  contentMismatch: defineProblem(
    'backup-content-mismatch',
    502,
    'A file’s bytes do not match what the site’s listing declared',
  ),
  listingInvalid: defineProblem('backup-listing-invalid', 502, 'The site’s file listing breaks its paging contract'),
  deadlineExceeded: defineProblem('backup-deadline-exceeded', 504, 'The backup ran past its deadline'),
  budgetExceeded: defineProblem('backup-budget-exceeded', 502, 'The site sent more bytes than its listing allows'),
};
