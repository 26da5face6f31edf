import { defineProblem } from '../shared/errors.js';

export const jobsProblems = {
  notFound: defineProblem('job-not-found', 404, 'There is no such job'),
  finished: defineProblem('job-finished', 409, 'The job has already finished'),
  notCancellable: defineProblem('job-not-cancellable', 409, 'The job cannot be cancelled while it runs'),
};
