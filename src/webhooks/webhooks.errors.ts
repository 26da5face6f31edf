import { defineProblem } from '../shared/errors.js';

export const webhooksProblems = {
  notFound: defineProblem('webhook-not-found', 404, 'No such webhook'),
  backlogFull: defineProblem('webhook-backlog-full', 409, 'The webhook has too many deliveries waiting'),
};
