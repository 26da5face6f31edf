import { defineProblem } from '../shared/errors.js';

export const safeUpdatesProblems = {
  notFound: defineProblem('safe-update-not-found', 404, 'No such safe update'),
  screenshotNotFound: defineProblem('safe-update-screenshot-not-found', 404, 'The safe update has no such screenshot'),
  notRestored: defineProblem(
    'restore-point-not-restored',
    502,
    'The site’s standalone rollback path did not put the restore point back',
  ),
};
