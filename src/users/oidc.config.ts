import { isIP } from 'node:net';
import { parseRoleMap, type RoleMap } from './oidc.js';
import { defineSettings } from '../shared/settings.js';

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

const REQUIRED = '(required with the issuer)';

/** SITEWARDEN_OIDC_*: parseOidcConfig reads them (they are checked together). */
export const OIDC_SETTINGS = defineSettings({
  SITEWARDEN_OIDC_ISSUER: {
    defaultText: 'unset (no single sign-on)',
    example: 'https://sso.example.com/realms/staff',
    doc: "the OpenID provider's issuer URL, e.g. `https://accounts.google.com`, `https://login.microsoftonline.com/TENANT/v2.0`, `https://sso.example.com/realms/staff` (Keycloak), `https://authentik.example.com/application/o/sitewarden/`; https, or http on loopback only. Set, it adds *Sign in with …* to the sign-in page; see [single sign-on](single-sign-on.md). The provider is trusted configuration, like an S3 endpoint: the network boundary does not apply to it",
    comment:
      'Single sign-on with an OpenID provider (docs/single-sign-on.md). Register the redirect URI\nSITEWARDEN_PUBLIC_URL/sign-in/oidc/callback at the provider. The role map gives each claim value a\nrole (the highest wins; * is everyone else; no * and no match: refused), at every sign-in.',
  },
  SITEWARDEN_OIDC_CLIENT_ID: {
    defaultText: REQUIRED,
    example: 'sitewarden',
    doc: `the client id the provider gave Sitewarden; register the redirect URI \`SITEWARDEN_PUBLIC_URL${OIDC_CALLBACK_PATH}\``,
  },
  SITEWARDEN_OIDC_CLIENT_SECRET: {
    defaultText: REQUIRED,
    example: '',
    doc: 'its client secret (sent with HTTP Basic to the token endpoint)',
  },
  SITEWARDEN_OIDC_ROLE_MAP: {
    defaultText: REQUIRED,
    example: 'sitewarden-owners=owner,sitewarden-staff=manager,*=viewer',
    doc: 'claim values to roles, `value=role` separated by commas, e.g. `sitewarden-owners=owner,sitewarden-staff=manager,*=viewer`: the highest role of every value the user has wins; `*` is the role of everyone else; without `*`, an account with no mapped value is refused (`oidc-no-role`). Applied at every sign-in',
  },
  SITEWARDEN_OIDC_ROLE_CLAIM: {
    default: 'groups',
    doc: "the claim the role map reads: a string or a list; a dotted name reads a nested claim (Keycloak's `realm_access.roles`)",
  },
  SITEWARDEN_OIDC_ALLOWED_DOMAINS: {
    defaultText: 'unset (any)',
    example: 'example.com',
    doc: 'e-mail domains allowed to sign in, separated by commas (exact: `example.com` does not allow `sub.example.com`). Listing them also allows linking an existing local account of the same verified address ([single sign-on](single-sign-on.md#first-sign-in-and-linking))',
  },
  SITEWARDEN_OIDC_TAGS_CLAIM: {
    defaultText: 'unset (no scope from claims)',
    example: 'groups',
    doc: "a claim whose values become the user's site scope tags at every sign-in (those starting with `SITEWARDEN_OIDC_TAG_PREFIX`, the prefix removed, lowercased; invalid tag names dropped); no value: every site, except for a `client`, who is then refused",
  },
  SITEWARDEN_OIDC_TAG_PREFIX: {
    defaultText: '(empty)',
    example: 'client:',
    doc: 'only values of the tags claim starting with this count, e.g. `client:` makes the group `client:acme` the tag `acme`',
  },
  SITEWARDEN_OIDC_SCOPES: {
    default: 'openid email profile',
    doc: 'the scopes asked for (must include `openid`); add the one that brings the groups claim when the provider needs it (`groups` at Authentik and oidc-provider)',
  },
  SITEWARDEN_OIDC_PROVIDER_NAME: {
    default: 'single sign-on',
    doc: "the button's label: *Sign in with NAME* (at most 60 printable characters)",
  },
  SITEWARDEN_OIDC_TIMEOUT_MS: {
    default: '10000',
    doc: 'time limit of each request to the provider (discovery, token, userinfo; 1000–120000)',
  },
  SITEWARDEN_OIDC_LOCAL_PASSWORDS: {
    default: 'on',
    doc: '`off`: the sign-in page shows only the single sign-on button and a password sign-in is refused (`403 password-sign-in-disabled`); break glass: `sitewarden users reset-password`, this `on`, restart',
    comment:
      'off: only the single sign-on button. Break glass: `sitewarden users reset-password admin`, set this\non, restart the daemon, sign in with the password.',
  },
});
