import { refreshProblems } from '../fleet/index.js';
import { defineProblem } from '../shared/errors.js';

export const fleetActionsProblems = {
  selection: refreshProblems.selection,
  noSites: defineProblem('no-sites-selected', 422, 'The selection names no site to act on'),
  unsupported: defineProblem('fleet-action-unsupported', 422, 'This action is not available for this kind of item'),
  notFound: defineProblem('fleet-action-not-found', 404, 'No such fleet action'),
};
