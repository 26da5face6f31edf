import { updateProblems } from '../inventory/index.js';
import { defineProblem } from '../shared/errors.js';

export const pluginsProblems = {
  notFound: defineProblem('plugin-not-found', 404, 'The site has no such plugin'),
  notInDirectory: defineProblem('plugin-not-in-directory', 422, 'The plugin directory has no such plugin'),
  alreadyInstalled: defineProblem('plugin-already-installed', 409, 'The plugin is already installed'),
  active: defineProblem('plugin-active', 409, 'The plugin is active'),
  noUpdate: updateProblems.noUpdate,
  operationFailed: updateProblems.operationFailed,
};
