import { defineProblem } from '../shared/errors.js';

/** Two-factor sign-in and session problems (users feature). */
export const twoFactorProblems = {
  codeInvalid: defineProblem('two-factor-code-invalid', 400, 'The two-factor code is not right'),
  notEnabled: defineProblem('two-factor-not-enabled', 409, 'Two-factor sign-in is not on'),
  alreadyEnabled: defineProblem('two-factor-already-enabled', 409, 'Two-factor sign-in is already on'),
  notPending: defineProblem('two-factor-not-pending', 409, 'No two-factor enrolment was begun'),
  proofRequired: defineProblem('two-factor-proof-required', 400, 'A current code or the password is needed'),
  signInExpired: defineProblem('two-factor-sign-in-expired', 401, 'The sign-in expired; enter the password again'),
  sessionNotFound: defineProblem('session-not-found', 404, 'No such session'),
  noUser: defineProblem('token-has-no-user', 400, 'This operator token belongs to no user'),
};
