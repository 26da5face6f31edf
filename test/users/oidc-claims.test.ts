import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import {
  claimValues,
  domainAllowed,
  emailVerified,
  parseRoleMap,
  roleFromClaims,
  tagsFromClaims,
} from '../../src/users/oidc.js';

describe('single sign-on claims → role and scope tags', () => {
  const map = parseRoleMap('sitewarden-owners=owner, sitewarden-staff=manager ,*=viewer');

  it('parses the role map and refuses what is not value=role', () => {
    expect(map).toEqual({
      entries: [
        { value: 'sitewarden-owners', role: 'owner' },
        { value: 'sitewarden-staff', role: 'manager' },
      ],
      fallback: 'viewer',
    });
    // A value may itself hold `=` (an LDAP DN); the role is after the last one.
    expect(parseRoleMap('cn=admins=owner').entries).toEqual([{ value: 'cn=admins', role: 'owner' }]);
    expect(() => parseRoleMap('admins=admin')).toThrow(/not claim-value=role/);
    expect(() => parseRoleMap('=owner')).toThrow(/not claim-value=role/);
    expect(() => parseRoleMap(' , ')).toThrow(/maps no claim value/);
  });

  it('takes the highest role of every matching value, else the fallback, else none', () => {
    expect(roleFromClaims({ groups: ['sitewarden-staff', 'sitewarden-owners'] }, 'groups', map)).toBe('owner');
    expect(roleFromClaims({ groups: ['sitewarden-staff'] }, 'groups', map)).toBe('manager');
    expect(roleFromClaims({ groups: 'sitewarden-staff' }, 'groups', map)).toBe('manager');
    expect(roleFromClaims({ groups: ['marketing'] }, 'groups', map)).toBe('viewer');
    expect(roleFromClaims({}, 'groups', map)).toBe('viewer');
    expect(roleFromClaims({ groups: ['marketing'] }, 'groups', parseRoleMap('sitewarden-owners=owner'))).toBeNull();
    // Values are compared exactly.
    expect(
      roleFromClaims({ groups: ['Sitewarden-Owners'] }, 'groups', parseRoleMap('sitewarden-owners=owner')),
    ).toBeNull();
  });

  it('reads nested claims by a dotted name (Keycloak realm roles) and ignores values that are not strings', () => {
    const claims = { realm_access: { roles: ['sitewarden-owners', 7, { x: 1 }, null] } };
    expect(claimValues(claims, 'realm_access.roles')).toEqual(['sitewarden-owners', '7']);
    expect(roleFromClaims(claims, 'realm_access.roles', map)).toBe('owner');
    expect(claimValues({ 'a.b': 'flat', a: { b: 'nested' } }, 'a.b')).toEqual(['flat']);
    expect(claimValues({ a: 'x' }, 'a.b')).toEqual([]);
  });

  it('makes scope tags from the values with the prefix, lowercased, valid, sorted and unique', () => {
    const claims = { groups: ['client:Acme', 'client:globex', 'client:acme', 'staff', 'client:bad tag!', 'client:'] };
    expect(tagsFromClaims(claims, 'groups', 'client:')).toEqual(['acme', 'globex']);
    expect(tagsFromClaims({ clients: ['acme', 'Initech'] }, 'clients')).toEqual(['acme', 'initech']);
    expect(tagsFromClaims({}, 'clients')).toEqual([]);
    expect(tagsFromClaims({ clients: Array.from({ length: 50 }, (_, i) => `c${i}`) }, 'clients')).toHaveLength(32);
  });

  it('checks the e-mail is verified and in an allowed domain', () => {
    expect(emailVerified({ email_verified: true })).toBe(true);
    expect(emailVerified({ email_verified: 'true' })).toBe(true);
    expect(emailVerified({ xms_edov: true })).toBe(true);
    expect(emailVerified({ email_verified: false })).toBe(false);
    expect(emailVerified({})).toBe(false);
    expect(domainAllowed('a@agency.example', ['agency.example'])).toBe(true);
    expect(domainAllowed('a@AGENCY.example', ['agency.example'])).toBe(true);
    expect(domainAllowed('a@sub.agency.example', ['agency.example'])).toBe(false);
    expect(domainAllowed('a@agency.example.evil', ['agency.example'])).toBe(false);
    expect(domainAllowed('a@b@agency.example', ['agency.example'])).toBe(false);
    expect(domainAllowed('a@anything.example', [])).toBe(true);
    expect(domainAllowed('no-at-sign', [])).toBe(false);
  });
});

describe('SITEWARDEN_OIDC_* settings', () => {
  const base = {
    SITEWARDEN_OIDC_ISSUER: 'https://login.agency.example/realms/staff',
    SITEWARDEN_OIDC_CLIENT_ID: 'sitewarden',
    SITEWARDEN_OIDC_CLIENT_SECRET: 'secret',
    SITEWARDEN_OIDC_ROLE_MAP: 'sitewarden-owners=owner,*=viewer',
  };

  it('is off without an issuer, and complete with one', () => {
    expect(loadConfig({}).oidc).toBeNull();
    expect(
      loadConfig({ ...base, SITEWARDEN_OIDC_ALLOWED_DOMAINS: '@Agency.example, other.example' }).oidc,
    ).toMatchObject({
      issuer: base.SITEWARDEN_OIDC_ISSUER,
      clientId: 'sitewarden',
      allowedDomains: ['agency.example', 'other.example'],
      roleClaim: 'groups',
      tagsClaim: null,
      localPasswords: true,
      scopes: 'openid email profile',
      providerName: 'single sign-on',
      timeoutMs: 10_000,
    });
  });

  it('refuses incomplete or unsafe settings with the variable named', () => {
    const refused = (env: Record<string, string>, message: RegExp) => {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    };
    refused({ SITEWARDEN_OIDC_CLIENT_ID: 'x' }, /SITEWARDEN_OIDC_CLIENT_ID is set but SITEWARDEN_OIDC_ISSUER is not/);
    refused({ ...base, SITEWARDEN_OIDC_ISSUER: 'http://login.agency.example' }, /https URL \(http only on loopback\)/);
    refused({ ...base, SITEWARDEN_OIDC_CLIENT_SECRET: '' }, /SITEWARDEN_OIDC_CLIENT_SECRET is required/);
    refused({ ...base, SITEWARDEN_OIDC_ROLE_MAP: '' }, /SITEWARDEN_OIDC_ROLE_MAP is required/);
    refused({ ...base, SITEWARDEN_OIDC_ROLE_MAP: 'x=root' }, /SITEWARDEN_OIDC_ROLE_MAP: "x=root"/);
    refused({ ...base, SITEWARDEN_OIDC_LOCAL_PASSWORDS: 'no' }, /must be on or off/);
    refused({ ...base, SITEWARDEN_OIDC_ALLOWED_DOMAINS: 'not a domain' }, /"not" is not a domain name/);
    refused({ ...base, SITEWARDEN_OIDC_SCOPES: 'email' }, /must include openid/);
    refused({ ...base, SITEWARDEN_OIDC_TIMEOUT_MS: '5' }, /SITEWARDEN_OIDC_TIMEOUT_MS/);
    // Plain http is for a provider on this host (tests, a local Keycloak).
    expect(loadConfig({ ...base, SITEWARDEN_OIDC_ISSUER: 'http://127.0.0.1:8081/realms/x' }).oidc?.issuer).toBe(
      'http://127.0.0.1:8081/realms/x',
    );
  });
});
