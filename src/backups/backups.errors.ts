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
