import { defineProblem } from '../shared/errors.js';

export const usersProblems = {
  notFound: defineProblem('user-not-found', 404, 'No such user'),
  exists: defineProblem('user-exists', 409, 'A user with that name exists'),
  invalid: defineProblem('user-invalid', 400, 'The user name or password is not acceptable'),
  signInFailed: defineProblem('sign-in-failed', 401, 'Wrong user name or password'),
  signInLimited: defineProblem('sign-in-rate-limited', 429, 'Too many failed sign-ins'),
  busy: defineProblem('sign-in-busy', 429, 'Too many sign-ins at once'),
  lastOwner: defineProblem('last-owner', 409, 'The last owner cannot be demoted or deleted'),
  roleInvalid: defineProblem('role-invalid', 400, 'Not a role'),
  scopeInvalid: defineProblem('scope-invalid', 400, 'The site scope is not acceptable'),
  currentPasswordWrong: defineProblem('current-password-incorrect', 400, 'The current password is not right'),
};
