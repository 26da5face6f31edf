import { defineProblem } from '../shared/errors.js';

export const adminLoginProblems = {
  disabled: defineProblem('admin-login-disabled', 409, 'One-click sign-in to wp-admin is turned off for the site'),
};
