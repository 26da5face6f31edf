import { defineProblem } from '../shared/errors.js';

/** Single sign-on's refusals, shown on the dashboard's sign-in error page with their type (docs/single-sign-on.md). */
export const oidcProblems = {
  passwordsOff: defineProblem('password-sign-in-disabled', 403, 'Password sign-in is switched off'),
  expired: defineProblem('oidc-sign-in-expired', 400, 'The single sign-on expired or was not started here'),
  callbackInvalid: defineProblem('oidc-callback-invalid', 400, 'The answer from the identity provider is not valid'),
  providerRefused: defineProblem('oidc-provider-refused', 403, 'The identity provider refused the sign-in'),
  providerUnavailable: defineProblem('oidc-provider-unavailable', 502, 'The identity provider did not answer'),
  emailUnverified: defineProblem(
    'oidc-email-unverified',
    403,
    'The identity provider does not vouch for the e-mail address',
  ),
  domainRefused: defineProblem('oidc-domain-refused', 403, 'The e-mail address is not in an allowed domain'),
  noRole: defineProblem('oidc-no-role', 403, 'No role is mapped for this account'),
  accountConflict: defineProblem(
    'oidc-account-conflict',
    409,
    'A local account with that name exists and is not linked',
  ),
};
