// The users feature's door: dashboard accounts and their sessions.
export { createUsersRepository } from './users.repository.js';
export { createUsersService, type SessionSummary, type SignedInSession, type UsersService } from './users.service.js';
export { createTwoFactorRepository } from './two-factor.repository.js';
export { twoFactorProblems } from './two-factor.errors.js';
export { usersProblems } from './users.errors.js';
export { createOidcSignIn, type OidcSignIn } from './oidc.service.js';
export { oidcProblems } from './oidc.errors.js';
export { OIDC_CALLBACK_PATH } from './oidc.config.js';
export { createUsersRoutes } from './users.routes.js';
