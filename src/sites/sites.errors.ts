import { defineProblem } from '../shared/errors.js';

export const sitesProblems = {
  notFound: defineProblem('site-not-found', 404, 'No such site'),
  invalidUrl: defineProblem('invalid-site-url', 400, 'The site URL is not valid'),
  alreadyConnected: defineProblem('site-already-connected', 409, 'The site is already connected'),
  connectionPending: defineProblem(
    'site-connection-pending',
    409,
    'A connection to the site is already waiting for approval',
  ),
  incompleteCredentials: defineProblem(
    'incomplete-credentials',
    400,
    'Give both username and applicationPassword, or neither',
  ),
  authorizationUnknown: defineProblem('authorization-unknown', 400, 'The authorization is unknown or already used'),
  authorizationExpired: defineProblem('authorization-expired', 410, 'The authorization request has expired'),
  authorizationRejected: defineProblem('authorization-rejected', 403, 'The site’s admin rejected the connection'),
  authorizationMismatch: defineProblem('authorization-site-mismatch', 422, 'The approval came from a different site'),
  notConnected: defineProblem('site-not-connected', 409, 'The site is not connected'),
};
