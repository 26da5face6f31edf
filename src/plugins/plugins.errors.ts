import { updateProblems } from '../inventory/index.js';
import { defineProblem } from '../shared/errors.js';

export const pluginsProblems = {
  notFound: defineProblem('plugin-not-found', 404, 'The site has no such plugin'),
  notInDirectory: defineProblem('plugin-not-in-directory', 422, 'The plugin directory has no such plugin'),
  alreadyInstalled: defineProblem('plugin-already-installed', 409, 'The plugin is already installed'),
  active: defineProblem('plugin-active', 409, 'The plugin is active'),
  dependenciesUnmet: defineProblem(
    'plugin-dependencies-unmet',
    409,
    'Plugins this plugin requires are missing or inactive',
  ),
  requiredBy: defineProblem('plugin-required-by', 409, 'Active plugins require this plugin'),
  noUpdate: updateProblems.noUpdate,
  operationFailed: updateProblems.operationFailed,
};
