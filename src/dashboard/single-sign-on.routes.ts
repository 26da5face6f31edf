import { Hono, type Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { html } from 'hono/html';
import { clientAddress } from '../http/client-address.js';
import { isAppError, problemType, type AppError } from '../shared/errors.js';
import { OIDC_CALLBACK_PATH, oidcProblems, usersProblems, type OidcSignIn } from '../users/index.js';
import { publicPage } from './layout.js';
import { isSecure, setSessionCookie, type DashboardEnv } from './session.js';

export type SingleSignOn = Pick<OidcSignIn, 'providerName' | 'localPasswords' | 'start' | 'finish'>;

export const SINGLE_SIGN_ON_PATH = '/sign-in/oidc';
export { OIDC_CALLBACK_PATH };

/**
 * The browser's end of a single sign-on begun here: a random id of the flow the daemon remembers
 * (state, nonce, PKCE verifier). SameSite=Lax, not Strict: the provider's redirect back is a
 * cross-site navigation, and the cookie must come with it. Only its two paths see it.
 */
const FLOW_COOKIE = 'sw_oidc';

/** A link, not a form: the dashboard's CSP `form-action 'self'` would stop a form's redirect to the provider. */
export function singleSignOnButton(sso: Pick<SingleSignOn, 'providerName'>, next: string) {
  const href = `${SINGLE_SIGN_ON_PATH}${next === '/' ? '' : `?next=${encodeURIComponent(next)}`}`;
  return html`<p class="sso"><a class="button" href="${href}">Sign in with ${sso.providerName}</a></p>`;
}

/**
 * A refused sign-in as a page: what happened, its stable problem type, and the way back. The
 * status is the problem's (never a 500).
 */
function signInRefusedPage(c: Context, error: AppError) {
  const type = problemType(error.problem.name);
  c.header('X-Problem-Type', type);
  return c.html(
    publicPage(
      'Sign-in refused',
      html`<section class="signin" data-problem-type="${type}">
        <h1>Sitewarden</h1>
        <h2>${error.problem.title}</h2>
        <p class="flash error" role="alert">${error.detail}.</p>
        <p class="hint">Problem type: <code>${type}</code></p>
        <p><a href="/sign-in">Back to sign in</a></p>
      </section>`,
    ),
    error.problem.status as 400,
  );
}

/** POST /sign-in with local passwords switched off. */
export function passwordSignInRefused(c: Context) {
  return signInRefusedPage(
    c,
    oidcProblems.passwordsOff.create(
      'password sign-in is switched off here; use single sign-on (an operator can run `sitewarden users reset-password` and switch SITEWARDEN_OIDC_LOCAL_PASSWORDS on)',
    ),
  );
}

/**
 * GET /sign-in/oidc sends the browser to the provider; the provider sends it back to
 * /sign-in/oidc/callback, which opens the dashboard session. Every refusal is a page with its
 * problem type (signInRefusedPage).
 */
export function createSingleSignOnRoutes({
  oidc,
  httpsPublicUrl,
  safeNext,
}: {
  oidc: SingleSignOn;
  httpsPublicUrl: boolean;
  safeNext: (next: unknown) => string;
}) {
  const app = new Hono<DashboardEnv>();
  const cookieOptions = (c: Context) =>
    ({ httpOnly: true, secure: isSecure(c, httpsPublicUrl), sameSite: 'Lax', path: SINGLE_SIGN_ON_PATH }) as const;

  app.get(SINGLE_SIGN_ON_PATH, async (c) => {
    try {
      const started = await oidc.start(safeNext(c.req.query('next')));
      setCookie(c, FLOW_COOKIE, started.flowId, { ...cookieOptions(c), maxAge: started.maxAgeSeconds });
      return c.redirect(started.url, 303);
    } catch (error) {
      if (!isAppError(error)) throw error;
      return signInRefusedPage(c, error);
    }
  });

  app.get(OIDC_CALLBACK_PATH, async (c) => {
    const flowId = getCookie(c, FLOW_COOKIE);
    deleteCookie(c, FLOW_COOKIE, cookieOptions(c));
    const query = new URL(c.req.url).search;
    try {
      const { session, next } = await oidc.finish(flowId, query, clientAddress(c), c.req.header('user-agent'));
      setSessionCookie(c, session.token, session.expiresAt, isSecure(c, httpsPublicUrl));
      // Not a redirect: the session cookie is SameSite=Strict, and a redirect chain that began at the
      // provider is cross-site, so the browser would not send it to `next`. A page of this origin
      // that moves on by itself is same-site.
      c.header('Refresh', `0;url=${next}`);
      return c.html(
        publicPage(
          'Signed in',
          html`<meta http-equiv="refresh" content="0;url=${next}" />
            <section class="signin">
              <h1>Sitewarden</h1>
              <p>Signed in as ${session.user.username}. <a href="${next}">Continue</a></p>
            </section>`,
        ),
      );
    } catch (error) {
      if (!isAppError(error)) throw error;
      if (error.problem === usersProblems.busy) c.header('Retry-After', '5');
      return signInRefusedPage(c, error);
    }
  });
  return app;
}
