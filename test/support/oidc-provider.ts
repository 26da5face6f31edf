import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** What a test account's provider says about it. */
export interface TestAccount {
  email: string;
  email_verified?: boolean;
  groups?: string[];
  [claim: string]: unknown;
}

/**
 * A real OpenID provider (oidc-provider) on a loopback port, with one confidential client whose
 * redirect URI is the daemon's callback. Its dev interaction pages sign in any account name in
 * `accounts` (any password); consent is given by itself. Accounts can be changed between sign-ins.
 */
export async function startOidcProvider({ redirectUri }: { redirectUri: string }) {
  const accounts = new Map<string, TestAccount>();
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = { clientId: 'sitewarden-test', clientSecret: 'a-test-client-secret-of-some-length' };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: [redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    // The claims of the scopes asked for go in the ID token too, as most providers do.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    cookies: { keys: ['a-cookie-key-for-the-test-provider'] },
    async findAccount(_ctx, id) {
      if (!accounts.has(id)) return undefined;
      return { accountId: id, claims: () => ({ sub: id, ...accounts.get(id)! }) };
    },
    // Consent is given by itself: the tests are about the daemon, not this provider's pages.
    async loadExistingGrant(ctx) {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId!,
      });
      grant.addOIDCScope(String(ctx.oidc.params!.scope ?? 'openid'));
      await grant.save();
      return grant;
    },
  });
  // Quiet: the dev interactions warn once per process on the console otherwise.
  provider.on('server_error', () => undefined);
  handler = provider.callback();
  return {
    issuer,
    ...client,
    accounts,
    provider,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
export type TestOidcProvider = Awaited<ReturnType<typeof startOidcProvider>>;

/**
 * Plays the browser at the provider without a browser: from the authorization URL, through the
 * dev login form (as `login`), to the redirect back to `redirectUri`, which it answers (the
 * daemon's callback URL with its code and state). Cookies of the provider are kept between steps.
 */
export async function signInAtProvider(authorizationUrl: string, login: string, redirectUri: string): Promise<URL> {
  const jar = new Map<string, string>();
  const cookie = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
  const keep = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const equals = pair!.indexOf('=');
      jar.set(pair!.slice(0, equals), pair!.slice(equals + 1));
    }
  };
  let url = new URL(authorizationUrl);
  let init: RequestInit = {};
  for (let step = 0; step < 12; step++) {
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers, cookie: cookie() } });
    keep(response);
    init = {};
    const location = response.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      if (next.href.startsWith(redirectUri)) return next;
      url = next;
      continue;
    }
    const page = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    if (response.status !== 200 || !action)
      throw new Error(`the provider answered ${response.status}: ${page.slice(0, 500)}`);
    const prompt = /name="prompt" value="([^"]+)"/.exec(page)?.[1];
    const form: Record<string, string> =
      prompt === 'login' ? { prompt, login, password: 'any' } : { prompt: prompt ?? 'consent' };
    url = new URL(action.replace(/&amp;/g, '&'), url);
    init = {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    };
  }
  throw new Error('the provider never sent the browser back');
}
