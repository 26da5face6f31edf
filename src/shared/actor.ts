import { z } from 'zod';

/**
 * Who asked for the request being handled: an API token (`token`) or a signed-in dashboard user
 * (`user`), by id. The authentication middlewares set it on the request's context (`actor`); a route
 * that starts an update hands it to the service as `requestedBy`, and the update history records it.
 * Passed, not ambient: an AsyncLocalStorage would enable Node 20's promise hooks for the whole
 * process, a cost on every promise (about a tenth of a bulk update's CPU, bench/bulk-updates.ts).
 */
export const ActorSchema = z.object({ kind: z.enum(['token', 'user']), id: z.string() });
export type Actor = z.infer<typeof ActorSchema>;

/** Who asked for an update, when a request did: the update services' last, optional argument. */
export interface RequestedBy {
  requestedBy?: Actor;
}

/**
 * Roles, from least to most (issue 33, docs/design/team-access.md): `client` (a viewer limited to
 * the sites of its tags: until site scopes exist it may read nothing but its own account),
 * `viewer` (reads), `manager` (all site work), `owner` (everything: users, tokens of others,
 * webhooks, targets).
 */
export const roles = ['client', 'viewer', 'manager', 'owner'] as const;
export type Role = (typeof roles)[number];

export const isRole = (value: unknown): value is Role => typeof value === 'string' && roles.includes(value as Role);

/** Whether `role` may do what needs `needed`. */
export const roleAtLeast = (role: Role, needed: Role): boolean => roles.indexOf(role) >= roles.indexOf(needed);

/** The lower of two roles: a token's effective role is the lower of its own and its user's. */
export const lowerRole = (a: Role, b: Role): Role => (roles.indexOf(a) <= roles.indexOf(b) ? a : b);

/** Which sites a request may see. Only `all` today; tag scopes are the next increment of issue 33. */
type SiteScope = { kind: 'all' };

/**
 * What a request may do: who asks, their effective role (for a token the lower of its own and its
 * user's, at this request) and their site scope. Built by the authentication middlewares.
 */
export interface Access {
  actor: Actor;
  role: Role;
  sites: SiteScope;
  /** The user behind the request: the signed-in user, or the token's user (null: an operator token from the CLI). */
  userId: string | null;
}
