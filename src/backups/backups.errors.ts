import { defineProblem } from '../shared/errors.js';

export const backupsProblems = {
  notFound: defineProblem('backup-not-found', 404, 'The site has no such backup'),
  restoreNotFound: defineProblem('restore-not-found', 404, 'The site has no such restore'),
  inProgress: defineProblem('backup-in-progress', 409, 'A backup or restore of the site is already queued or running'),
  notCompleted: defineProblem('backup-not-completed', 409, 'The backup did not complete'),
};
