import { defineProblem } from '../shared/errors.js';

export const uptimeProblems = {
  invalidTimeRange: defineProblem('invalid-time-range', 400, 'The time range is not valid'),
};
