import { isIP } from 'node:net';
import { parseRoleMap, type RoleMap } from './oidc.js';

/** Single sign-on with an OpenID provider (docs/single-sign-on.md); null in Config when SITEWARDEN_OIDC_ISSUER is unset. */
export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The button's label: "Sign in with <providerName>". */
  providerName: string;
  scopes: string;
  /** Lowercase domains an e-mail address must be in; empty: any (the role map still decides). */
  allowedDomains: string[];
  roleClaim: string;
  roleMap: RoleMap;
  /** The claim whose values (those starting with tagPrefix, the prefix removed) are the user's scope tags; null: none. */
  tagsClaim: string | null;
  tagPrefix: string;
  /** Whether dashboard users may still sign in with a local password (off: only the SSO button). */
  localPasswords: boolean;
  /** Time limit of each request to the provider. */
  timeoutMs: number;
}

export const OIDC_CALLBACK_PATH = '/sign-in/oidc/callback';

const isLoopback = (hostname: string) => {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  return host === 'localhost' || (isIP(host) === 4 && host.startsWith('127.')) || host === '::1';
};

/** Whether requests to the issuer may be plain http: only on loopback (tests, a provider on the same host). */
export const insecureIssuerAllowed = (issuer: string): boolean => {
  const url = new URL(issuer);
  return url.protocol === 'http:' && isLoopback(url.hostname);
};

/**
 * SITEWARDEN_OIDC_*: nothing set, no single sign-on. With an issuer, the client id, the secret and
 * the role map are required; `fail` makes the ConfigError config.ts throws.
 */
export function parseOidcConfig(
  env: Record<string, string | undefined>,
  fail: (message: string) => Error,
): OidcConfig | null {
  const get = (name: string) => env[`SITEWARDEN_OIDC_${name}`]?.trim() || undefined;
  const issuer = get('ISSUER');
  const others = Object.keys(env).filter((key) => key.startsWith('SITEWARDEN_OIDC_') && env[key]?.trim());
  if (!issuer) {
    if (others.length > 0) throw fail(`${others[0]} is set but SITEWARDEN_OIDC_ISSUER is not`);
    return null;
  }
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw fail('SITEWARDEN_OIDC_ISSUER must be an https URL');
  }
  if (url.protocol !== 'https:' && !insecureIssuerAllowed(issuer))
    throw fail('SITEWARDEN_OIDC_ISSUER must be an https URL (http only on loopback)');
  if (url.search || url.hash) throw fail('SITEWARDEN_OIDC_ISSUER must have no query or fragment');
  const clientId = get('CLIENT_ID');
  if (!clientId) throw fail('SITEWARDEN_OIDC_CLIENT_ID is required with SITEWARDEN_OIDC_ISSUER');
  const clientSecret = get('CLIENT_SECRET');
  if (!clientSecret) throw fail('SITEWARDEN_OIDC_CLIENT_SECRET is required with SITEWARDEN_OIDC_ISSUER');
  const rawMap = get('ROLE_MAP');
  if (!rawMap)
    throw fail(
      'SITEWARDEN_OIDC_ROLE_MAP is required with SITEWARDEN_OIDC_ISSUER (e.g. sitewarden-admins=owner,*=viewer)',
    );
  let roleMap: RoleMap;
  try {
    roleMap = parseRoleMap(rawMap);
  } catch (error) {
    throw fail(`SITEWARDEN_OIDC_ROLE_MAP: ${(error as Error).message}`);
  }
  const allowedDomains = (get('ALLOWED_DOMAINS') ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((domain) => domain.toLowerCase().replace(/^@/, ''));
  for (const domain of allowedDomains)
    if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/.test(domain))
      throw fail(`SITEWARDEN_OIDC_ALLOWED_DOMAINS: "${domain}" is not a domain name`);
  const passwords = get('LOCAL_PASSWORDS') ?? 'on';
  if (passwords !== 'on' && passwords !== 'off') throw fail('SITEWARDEN_OIDC_LOCAL_PASSWORDS must be on or off');
  const timeout = Number(get('TIMEOUT_MS') ?? 10_000);
  if (!Number.isInteger(timeout) || timeout < 1_000 || timeout > 120_000)
    throw fail('SITEWARDEN_OIDC_TIMEOUT_MS must be a whole number from 1000 to 120000');
  const scopes = get('SCOPES') ?? 'openid email profile';
  if (!scopes.split(/\s+/).includes('openid')) throw fail('SITEWARDEN_OIDC_SCOPES must include openid');
  const providerName = get('PROVIDER_NAME') ?? 'single sign-on';
  if (providerName.length > 60 || /\p{Cc}/u.test(providerName))
    throw fail('SITEWARDEN_OIDC_PROVIDER_NAME must be at most 60 printable characters');
  return {
    issuer,
    clientId,
    clientSecret,
    providerName,
    scopes,
    allowedDomains,
    roleClaim: get('ROLE_CLAIM') ?? 'groups',
    roleMap,
    tagsClaim: get('TAGS_CLAIM') ?? null,
    tagPrefix: env.SITEWARDEN_OIDC_TAG_PREFIX ?? '',
    localPasswords: passwords === 'on',
    timeoutMs: timeout,
  };
}
