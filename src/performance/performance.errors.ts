import { defineProblem } from '../shared/errors.js';

export const performanceProblems = {
  auditNotFound: defineProblem('performance-audit-not-found', 404, 'The site has no audit with that id'),
  reportNotFound: defineProblem('performance-report-not-found', 404, 'The audit has no report'),
};
