import { defineProblem } from '../shared/errors.js';

export const safeUpdatesProblems = {
  notFound: defineProblem('safe-update-not-found', 404, 'No such safe update'),
};
