import { defineProblem } from '../shared/errors.js';

export const webhooksProblems = {
  notFound: defineProblem('webhook-not-found', 404, 'No such webhook'),
  invalidUrl: defineProblem('invalid-webhook-url', 422, 'The webhook URL is not usable'),
  backlogFull: defineProblem('webhook-backlog-full', 409, 'The webhook has too many deliveries waiting'),
};
