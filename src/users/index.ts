// The users feature's door: dashboard accounts and their sessions.
export { createUsersRepository } from './users.repository.js';
export { createUsersService, type SignedInSession, type UsersService } from './users.service.js';
export { usersProblems } from './users.errors.js';
export { createUsersRoutes } from './users.routes.js';
