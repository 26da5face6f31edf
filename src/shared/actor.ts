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
 * Roles, from least to most (issue 33, docs/design/team-access.md): `client` (a viewer always
 * limited to the sites of its scope tags: without tags it sees no site),
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

/**
 * Which sites a request may see: every site, or those carrying any of `tags` (an empty set: none).
 * Any user or token may be limited to tags; a `client` always is; an owner never
 * (docs/design/team-access.md). Repository queries take it as one SQL predicate (sites/visible-sites.ts).
 */
export type SiteScope = { kind: 'all' } | { kind: 'tags'; tags: readonly string[] };

export const ALL_SITES: SiteScope = { kind: 'all' };

/**
 * The scope stored tags give a principal of `role`: an owner every site whatever is stored; a
 * client its tags (none: no site); anyone else every site unless tags are stored (null: not limited).
 */
export function scopeOf(role: Role, tags: readonly string[] | null): SiteScope {
  if (role === 'owner') return ALL_SITES;
  if (role === 'client') return { kind: 'tags', tags: tags ?? [] };
  return tags === null ? ALL_SITES : { kind: 'tags', tags };
}

/** Both limits at once: a token's effective scope is the intersection of its own and its user's. */
export function intersectScopes(a: SiteScope, b: SiteScope): SiteScope {
  if (a.kind === 'all') return b;
  if (b.kind === 'all') return a;
  const other = new Set(b.tags);
  return { kind: 'tags', tags: a.tags.filter((tag) => other.has(tag)) };
}

/** Whether `inner` is within `outer` (a token's tags within its user's scope). */
export const scopeWithin = (inner: SiteScope, outer: SiteScope): boolean =>
  outer.kind === 'all' || (inner.kind === 'tags' && inner.tags.every((tag) => outer.tags.includes(tag)));

/** At most this many tags in a scope. */
const MAX_SCOPE_TAGS = 32;

/**
 * Scope tags as given (API, CLI, dashboard) checked and normalised like sites' tags (lowercase,
 * 1–64 of a–z, 0–9 and `:._-`), sorted, without repeats; an error message when one is not a tag
 * (a control character included: a tag is shown in terminals and pages).
 */
export function normaliseScopeTags(raw: readonly string[]): string[] | { error: string } {
  if (raw.length > MAX_SCOPE_TAGS) return { error: `a scope has at most ${MAX_SCOPE_TAGS} tags` };
  const tags = new Set<string>();
  for (const tag of raw) {
    // eslint-disable-next-line no-control-regex -- control characters are what is refused
    if (/[\u0000-\u001f\u007f-\u009f]/.test(tag)) return { error: 'a scope tag must not contain control characters' };
    const normal = tag.trim().toLowerCase();
    if (!/^[a-z0-9][a-z0-9:._-]{0,63}$/.test(normal))
      return {
        error: `${JSON.stringify(tag)} is not a tag: a tag is 1–64 of a–z, 0–9 and \`:._-\`, starting with a letter or digit`,
      };
    tags.add(normal);
  }
  return [...tags].sort();
}

/** Whether the request is limited to tags (a client, or any user or token given scope tags). */
export const isScoped = (access: Pick<Access, 'sites'>): boolean => access.sites.kind === 'tags';

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
