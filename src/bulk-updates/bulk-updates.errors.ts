import { defineProblem } from '../shared/errors.js';

export const bulkUpdatesProblems = {
  invalidSelection: defineProblem('bulk-selection-invalid', 400, 'Select sites by exactly one of sites, tag or all'),
  emptySelection: defineProblem('bulk-selection-empty', 422, 'The selection holds no update to apply'),
  notFound: defineProblem('bulk-update-not-found', 404, 'No such bulk update'),
};
