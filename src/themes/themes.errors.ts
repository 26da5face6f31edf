import { defineProblem } from '../shared/errors.js';

export const themesProblems = {
  notFound: defineProblem('theme-not-found', 404, 'The site has no such theme'),
  active: defineProblem('theme-active', 409, 'The theme is active'),
  broken: defineProblem('theme-broken', 409, 'The theme is broken and cannot be activated'),
  notInDirectory: defineProblem('theme-not-in-directory', 422, 'The theme directory has no such theme'),
  alreadyInstalled: defineProblem('theme-already-installed', 409, 'The theme is already installed'),
};
