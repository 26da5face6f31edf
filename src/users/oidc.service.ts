import { randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import { isProblem, type AppError } from '../shared/errors.js';
import type { Role } from '../shared/actor.js';
import type { StateDatabase } from '../db/state-db.js';
import { randomPassword } from './passwords.js';
import { domainAllowed, emailVerified, roleFromClaims, tagsFromClaims } from './oidc.js';
import { insecureIssuerAllowed, OIDC_CALLBACK_PATH, type OidcConfig } from './oidc.config.js';
import { oidcProblems } from './oidc.errors.js';
import { createOidcRepository } from './oidc.repository.js';
import { signInTicketsFor } from './sign-in-tickets.js';
import { usersProblems } from './users.errors.js';
import type { SignedInSession, UsersService } from './users.service.js';

/** A sign-in begun and not finished: this long at the provider, then start again. */
const FLOW_TTL_MS = 10 * 60_000;
/** The provider's metadata is read again after this long (its keys are refreshed by openid-client as they rotate). */
const DISCOVERY_TTL_MS = 60 * 60_000;

/** What a flow keeps until the callback: the PKCE verifier is a secret (stored, never logged). */
type Flow = {
  state: string;
  nonce: string;
  codeVerifier: string;
  next: string;
};

/** The user a sign-in resolved to, with the role and scope tags the claims gave. */
export interface SingleSignOnResult {
  session: SignedInSession & { token: string };
  next: string;
  role: Role;
  tags: string[];
}

/**
 * Single sign-on with an OpenID provider: authorization code with PKCE, state and nonce
 * (openid-client). `start` remembers a flow (keyed by a random id the browser keeps in a cookie: in
 * this process's memory on one machine, in the cluster's database otherwise, so that another API process
 * may finish it; sign-in-tickets.ts) and answers the provider's URL; `finish` takes the flow (once,
 * whichever process), checks the callback against it,
 * redeems the code, checks the claims (verified e-mail, allowed domain, a mapped role), finds or
 * links the user and opens an ordinary dashboard session. Rules: docs/single-sign-on.md.
 */
export function createOidcSignIn({
  config,
  publicUrl,
  state,
  users,
  clock,
  events,
}: {
  config: OidcConfig;
  /** The daemon's public URL: the redirect URI is `<publicUrl>/sign-in/oidc/callback`. */
  publicUrl: string;
  /** The daemon's state database (the one its services were given). */
  state: StateDatabase;
  users: UsersService;
  clock: Clock;
  events: Events;
}) {
  const repository = createOidcRepository(state);
  const redirectUri = `${publicUrl.replace(/\/+$/, '')}${OIDC_CALLBACK_PATH}`;
  const flows = signInTicketsFor<Flow>(state, 'oidc-flow', clock);
  let discovered: { configuration: client.Configuration; at: number } | null = null;
  let discovering: Promise<client.Configuration> | null = null;

  async function configuration(): Promise<client.Configuration> {
    const now = clock.now().getTime();
    if (discovered && now - discovered.at < DISCOVERY_TTL_MS) return discovered.configuration;
    discovering ??= client
      .discovery(new URL(config.issuer), config.clientId, undefined, client.ClientSecretBasic(config.clientSecret), {
        timeout: Math.ceil(config.timeoutMs / 1000),
        execute: insecureIssuerAllowed(config.issuer) ? [client.allowInsecureRequests] : [],
      })
      .then((found) => {
        discovered = { configuration: found, at: clock.now().getTime() };
        return found;
      })
      .finally(() => {
        discovering = null;
      });
    try {
      return await discovering;
    } catch (error) {
      throw oidcProblems.providerUnavailable.create(
        `the identity provider at ${config.issuer} could not be reached or read: ${describe(error)}`,
        {},
        { cause: error },
      );
    }
  }

  async function remember(flow: Flow): Promise<string> {
    const id = randomBytes(24).toString('base64url');
    await flows.put(id, flow, clock.now().getTime() + FLOW_TTL_MS);
    return id;
  }

  function refuse(error: AppError, email: string | null, address: string): never {
    events.emit('user.oidc_sign_in_refused', { reason: error.problem.name, email, address });
    throw error;
  }

  /** The claims the provider gives: the ID token's, completed by the userinfo endpoint's when it has one. */
  async function claimsOf(
    found: client.Configuration,
    tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>,
  ): Promise<Record<string, unknown>> {
    const idClaims = tokens.claims();
    if (!idClaims) throw oidcProblems.callbackInvalid.create('the provider answered without an ID token');
    if (!found.serverMetadata().userinfo_endpoint) return { ...idClaims };
    const info = await client.fetchUserInfo(found, tokens.access_token, idClaims.sub);
    // The ID token's claims win: they are signed.
    return { ...info, ...idClaims };
  }

  return {
    providerName: config.providerName,
    localPasswords: config.localPasswords,
    redirectUri,

    /** Begins a sign-in: the flow's id (for the browser's cookie) and the provider's URL to send the browser to. */
    async start(next: string): Promise<{ flowId: string; url: string; maxAgeSeconds: number }> {
      const found = await configuration();
      const codeVerifier = client.randomPKCECodeVerifier();
      const flow: Flow = {
        state: client.randomState(),
        nonce: client.randomNonce(),
        codeVerifier,
        next,
      };
      const url = client.buildAuthorizationUrl(found, {
        redirect_uri: redirectUri,
        scope: config.scopes,
        response_type: 'code',
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state: flow.state,
        nonce: flow.nonce,
      });
      return { flowId: await remember(flow), url: url.href, maxAgeSeconds: FLOW_TTL_MS / 1000 };
    },

    /**
     * Finishes a sign-in from the provider's callback: `query` is the callback's query string
     * (`?code=…&state=…`), `flowId` the cookie's. Every refusal is a problem of oidcProblems (or
     * users' `busy`), logged as `user.oidc_sign_in_refused`.
     */
    async finish(
      flowId: string | undefined,
      query: string,
      address: string,
      userAgent?: string,
    ): Promise<SingleSignOnResult> {
      // Single use, whatever happens next: of two callbacks with one flow (a replay), one gets it.
      const flow = flowId && flowId.length <= 100 ? await flows.take(flowId) : undefined;
      if (!flow)
        refuse(
          oidcProblems.expired.create('this sign-in expired or was begun in another browser; sign in again'),
          null,
          address,
        );
      const callbackUrl = new URL(`${redirectUri}${query.startsWith('?') ? query : `?${query}`}`);
      const params = callbackUrl.searchParams;
      // A provider's own refusal (`error=access_denied`) says so, whatever else the URL holds.
      if (!params.has('error') && params.get('state') !== flow.state)
        refuse(oidcProblems.callbackInvalid.create('the callback’s state does not match this sign-in'), null, address);
      const found = await configuration();
      let claims: Record<string, unknown>;
      try {
        const tokens = await client.authorizationCodeGrant(found, callbackUrl, {
          pkceCodeVerifier: flow.codeVerifier,
          expectedState: flow.state,
          expectedNonce: flow.nonce,
          idTokenExpected: true,
        });
        claims = await claimsOf(found, tokens);
      } catch (error) {
        refuse(classify(error), null, address);
      }
      const issuer = String(claims.iss ?? config.issuer);
      const subject = typeof claims.sub === 'string' ? claims.sub : '';
      const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
      if (!subject) refuse(oidcProblems.callbackInvalid.create('the ID token has no subject'), null, address);
      if (!email)
        refuse(
          oidcProblems.emailUnverified.create(
            'the provider gave no e-mail address; ask for the `email` scope (SITEWARDEN_OIDC_SCOPES)',
          ),
          null,
          address,
        );
      if (!emailVerified(claims))
        refuse(
          oidcProblems.emailUnverified.create(`the provider does not say that ${email} is verified (email_verified)`),
          email,
          address,
        );
      if (!domainAllowed(email, config.allowedDomains))
        refuse(
          oidcProblems.domainRefused.create(
            `${email} is not in an allowed domain (${config.allowedDomains.join(', ') || 'none'})`,
          ),
          email,
          address,
        );
      const role = roleFromClaims(claims, config.roleClaim, config.roleMap);
      if (!role)
        refuse(
          oidcProblems.noRole.create(
            `no value of the \`${config.roleClaim}\` claim is mapped to a role (SITEWARDEN_OIDC_ROLE_MAP); ask an owner to add you to a group`,
          ),
          email,
          address,
        );
      const tags = config.tagsClaim ? tagsFromClaims(claims, config.tagsClaim, config.tagPrefix) : [];

      const userId = await findOrLink(issuer, subject, email, role, address);
      await applyRole(userId, role);
      if (config.tagsClaim) await applyScope(userId, role, tags);
      const session = await users.openSingleSignOnSession(userId, address, userAgent);
      return { session, next: flow.next, role, tags };
    },
  };

  /**
   * The user of (issuer, subject); else, on a first sign-in, a new user named after the e-mail
   * address, or the existing local account of that name linked when that is safe: the provider
   * verified the address, the operator listed its domain (so they say the provider speaks for it),
   * and the account is not linked to another identity. Otherwise the sign-in is refused
   * (`oidc-account-conflict`): an owner renames or deletes the local account first.
   */
  async function findOrLink(issuer: string, subject: string, email: string, role: Role, address: string) {
    const known = await repository.findByIdentity(issuer, subject);
    if (known) return known.id;
    const existing = await repository.findByUsername(email);
    if (existing) {
      const safe = config.allowedDomains.length > 0 && existing.oidcIssuer === null;
      if (!safe || !(await repository.link(existing.id, issuer, subject)))
        refuse(
          oidcProblems.accountConflict.create(
            `a local account named ${email} exists and is not linked to this provider; an owner can rename or delete it${
              config.allowedDomains.length === 0 ? ', or list its domain in SITEWARDEN_OIDC_ALLOWED_DOMAINS' : ''
            }`,
          ),
          email,
          address,
        );
      events.emit('user.oidc_linked', { userId: existing.id, username: existing.username, issuer });
      return existing.id;
    }
    let created;
    try {
      // A random password nobody knows: the account signs in through the provider (or after `users reset-password`).
      created = await users.create(email, randomPassword(), role);
    } catch (error) {
      if (isProblem(error, usersProblems.invalid))
        refuse(
          oidcProblems.accountConflict.create(`${email} cannot be a user name here: ${error.detail}`),
          email,
          address,
        );
      throw error;
    }
    await repository.link(created.id, issuer, subject);
    events.emit('user.oidc_linked', { userId: created.id, username: created.username, issuer });
    return created.id;
  }

  /** The claims decide the role at every sign-in; the last owner stays an owner (an owner must remain). */
  async function applyRole(userId: string, role: Role): Promise<void> {
    try {
      await users.setRole(userId, role);
    } catch (error) {
      if (!isProblem(error, usersProblems.lastOwner)) throw error;
    }
  }

  /**
   * With SITEWARDEN_OIDC_TAGS_CLAIM the claims decide the site scope at every sign-in too: the tags
   * they give, or every site when they give none (a client must get one: users.setScope refuses
   * otherwise, and so does the sign-in). An owner always sees every site. Written only when it changed
   * (a change ends the user's other sessions).
   */
  async function applyScope(userId: string, role: Role, tags: string[]): Promise<void> {
    const wanted = role === 'owner' || tags.length === 0 ? null : tags;
    const current = (await users.find(userId))?.scopeTags ?? null;
    if (JSON.stringify(current) === JSON.stringify(wanted)) return;
    await users.setScope(userId, wanted);
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`.slice(0, 300);
  }
  return 'unknown error';
}

/** What went wrong with the callback, as a problem: the provider's refusal, a bad answer, or no answer. */
function classify(error: unknown): AppError {
  if (error instanceof client.AuthorizationResponseError) {
    const code = String(error.error)
      .replace(/[^\w.-]/g, '')
      .slice(0, 64);
    const description = (error.error_description ?? '').replace(/\p{Cc}/gu, ' ').slice(0, 200);
    return oidcProblems.providerRefused.create(
      `the identity provider answered ${code}${description ? `: ${description}` : ''}`,
    );
  }
  if (isProblem(error, oidcProblems.callbackInvalid, oidcProblems.providerUnavailable)) return error;
  if (error instanceof client.ResponseBodyError || error instanceof client.ClientError)
    return oidcProblems.callbackInvalid.create(`the provider’s answer was refused: ${describe(error)}`);
  return oidcProblems.providerUnavailable.create(`the identity provider could not be reached: ${describe(error)}`);
}

export type OidcSignIn = ReturnType<typeof createOidcSignIn>;
