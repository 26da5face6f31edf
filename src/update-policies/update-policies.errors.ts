import { defineProblem } from '../shared/errors.js';

export const updatePoliciesProblems = {
  notFound: defineProblem('update-policy-not-found', 404, 'No such update policy'),
  scope: defineProblem('invalid-policy-scope', 400, 'A policy is for exactly one site or one tag'),
  exists: defineProblem('update-policy-exists', 409, 'That site or tag already has an update policy'),
  holdNotFound: defineProblem('update-hold-not-found', 404, 'No such update hold'),
  holdReleased: defineProblem('update-hold-released', 409, 'The update hold was released already'),
};
