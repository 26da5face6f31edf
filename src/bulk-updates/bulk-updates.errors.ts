import { defineProblem } from '../shared/errors.js';
import { updateHistoryProblems } from '../update-history/index.js';

export const bulkUpdatesProblems = {
  invalidSelection: defineProblem('bulk-selection-invalid', 400, 'Select sites by exactly one of sites, tag or all'),
  emptySelection: defineProblem('bulk-selection-empty', 422, 'The selection holds no update to apply'),
  notFound: defineProblem('bulk-update-not-found', 404, 'No such bulk update'),
  notAPreview: defineProblem('bulk-update-not-a-preview', 409, 'Only a preview (a dry run) is applied'),
  previewAlreadyApplied: defineProblem('preview-already-applied', 409, 'The preview was already applied'),
  // The update history's: the history routes answer them, and a safe item that did not keep its update fails with them.
  ...updateHistoryProblems,
};

// Re-exported: the reasons a safe item failed with are the update history's (update-history/).
export { notKeptProblem } from '../update-history/index.js';
