import { isRole, roles, type Role } from '../shared/actor.js';

/**
 * Single sign-on's pure rules (docs/single-sign-on.md): which role and which scope tags a
 * provider's claims give, whether an e-mail address is verified and in an allowed domain. No I/O:
 * oidc.service.ts applies them at every sign-in.
 */

/** `value=role` pairs; `*` is the fallback used only when no other value matched. */
export interface RoleMap {
  entries: { value: string; role: Role }[];
  fallback: Role | null;
}

/** Tags are what site tags are (sites.schemas.ts TagName): 1–64 of a–z, 0–9 and `:._-`. */
const TAG = /^[a-z0-9][a-z0-9:._-]{0,63}$/;
const MAX_TAGS = 32;

/**
 * Parses SITEWARDEN_OIDC_ROLE_MAP: `sitewarden-owners=owner,sitewarden-staff=manager,*=viewer`.
 * Throws a message naming the bad pair. Values are compared exactly (a group name or id is case-sensitive at most providers).
 */
export function parseRoleMap(raw: string): RoleMap {
  const map: RoleMap = { entries: [], fallback: null };
  for (const pair of raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const equals = pair.lastIndexOf('=');
    const value = equals > 0 ? pair.slice(0, equals).trim() : '';
    const role = equals > 0 ? pair.slice(equals + 1).trim() : '';
    if (!value || !isRole(role))
      throw new Error(`"${pair}" is not claim-value=role (a role is one of ${roles.join(', ')})`);
    if (value === '*') map.fallback = role;
    else map.entries.push({ value, role });
  }
  if (map.entries.length === 0 && map.fallback === null) throw new Error('it maps no claim value to a role');
  return map;
}

/**
 * The values of a claim as strings: a string, a number or an array of them. A dotted name reads a
 * nested claim (Keycloak's `realm_access.roles`) when no claim has the dotted name itself.
 */
export function claimValues(claims: Record<string, unknown>, name: string): string[] {
  let value: unknown = claims[name];
  if (value === undefined && name.includes('.')) {
    value = claims;
    for (const part of name.split('.'))
      value =
        value && typeof value === 'object' && !Array.isArray(value)
          ? (value as Record<string, unknown>)[part]
          : undefined;
  }
  const list = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return list.flatMap((item) =>
    typeof item === 'string' ? [item] : typeof item === 'number' && Number.isFinite(item) ? [String(item)] : [],
  );
}

/**
 * The role the claims give: the highest role of every matching value (so a user in both the staff
 * and the owners group is an owner), else the `*` fallback, else null (the sign-in is refused).
 */
export function roleFromClaims(claims: Record<string, unknown>, claim: string, map: RoleMap): Role | null {
  const values = new Set(claimValues(claims, claim));
  let best: Role | null = null;
  for (const entry of map.entries)
    if (values.has(entry.value) && (best === null || roles.indexOf(entry.role) > roles.indexOf(best)))
      best = entry.role;
  return best ?? map.fallback;
}

/**
 * The scope tags the claims give: each value of `claim` that starts with `prefix` (the prefix
 * removed), lowercased; values that are not valid tag names are dropped. Sorted, without duplicates,
 * at most 32. `client:acme` with prefix `client:` is `acme`; with no prefix, every value is a tag.
 */
export function tagsFromClaims(claims: Record<string, unknown>, claim: string, prefix = ''): string[] {
  const tags = new Set<string>();
  for (const value of claimValues(claims, claim)) {
    if (!value.startsWith(prefix)) continue;
    const tag = value.slice(prefix.length).trim().toLowerCase();
    if (TAG.test(tag)) tags.add(tag);
  }
  return [...tags].sort().slice(0, MAX_TAGS);
}

/**
 * Whether the provider vouches for the address: `email_verified` true (some providers send the
 * string `"true"`), or Entra ID's `xms_edov` (the e-mail's domain is verified by the tenant's owner).
 */
export function emailVerified(claims: Record<string, unknown>): boolean {
  const verified = claims.email_verified;
  return verified === true || verified === 'true' || claims.xms_edov === true || claims.xms_edov === '1';
}

/** The address's domain, lowercased, or null when it is not one address. */
function emailDomain(email: string): string | null {
  const at = email.lastIndexOf('@');
  if (at < 1 || at === email.length - 1 || email.indexOf('@') !== at) return null;
  return email.slice(at + 1).toLowerCase();
}

/** Whether the address is in one of the allowed domains (exactly: `example.com` does not allow `sub.example.com`); none listed: any. */
export function domainAllowed(email: string, allowedDomains: readonly string[]): boolean {
  const domain = emailDomain(email);
  if (domain === null) return false;
  return allowedDomains.length === 0 || allowedDomains.includes(domain);
}
