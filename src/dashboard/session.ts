import type { Context, MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { SignedInSession, UsersService } from '../users/index.js';
import { html } from 'hono/html';
import { CSRF_FIELD, page } from './layout.js';
import { checkAccess, DASHBOARD_PERMISSIONS, DASHBOARD_SCOPE_AWARE, type SiteScopeCheck } from '../http/permissions.js';
import { scopeOf, type Access, type Actor } from '../shared/actor.js';
import { defineProblem, isAppError } from '../shared/errors.js';

const SESSION_COOKIE = 'sw_session';
const CSRF_HEADER = 'X-CSRF-Token';

export type DashboardEnv = { Variables: { session: SignedInSession; actor: Actor; access: Access } };

const csrfRefused = defineProblem('csrf-token-invalid', 403, 'The form is stale or did not come from the dashboard');
const READ_METHODS = new Set(['GET', 'HEAD']);

/** `Secure` when the request came over https, or the daemon's public URL is https (a TLS proxy in front). */
export function isSecure(c: Context, httpsPublicUrl: boolean): boolean {
  return httpsPublicUrl || new URL(c.req.url).protocol === 'https:';
}

export function setSessionCookie(c: Context, token: string, expiresAt: Date, secure: boolean): void {
  setCookie(c, SESSION_COOKIE, token, { httpOnly: true, secure, sameSite: 'Strict', path: '/', expires: expiresAt });
}

export function clearSessionCookie(c: Context, secure: boolean): void {
  deleteCookie(c, SESSION_COOKIE, { path: '/', secure, httpOnly: true, sameSite: 'Strict' });
}

/**
 * Every dashboard page but sign-in: no session, a redirect to sign-in (an EventSource or script
 * gets a 401). State-changing requests carry the session's CSRF token as the `_csrf` form field
 * or the X-CSRF-Token header; SameSite=Strict is the first wall, this the second.
 */
export function requireSession(
  users: UsersService,
  httpsPublicUrl: boolean,
  /** Site scopes: the check of a page's site (throws a 404 outside the scope) and the page then shown (an unknown site's). */
  scope?: { checkSite: SiteScopeCheck; hidden: (c: Context, session: SignedInSession) => Response | Promise<Response> },
): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    const token = getCookie(c, SESSION_COOKIE);
    const session = token ? await users.authenticate(token) : null;
    if (!session) {
      if (c.req.header('accept')?.includes('text/html') === false && c.req.method !== 'GET')
        return c.text('sign in first', 401);
      const next_ = c.req.method === 'GET' ? `?next=${encodeURIComponent(c.req.path)}` : '';
      return c.redirect(`/sign-in${next_}`, 303);
    }
    if (!READ_METHODS.has(c.req.method)) {
      let sent = c.req.header(CSRF_HEADER);
      if (!sent) {
        const type = c.req.header('content-type') ?? '';
        if (type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data')) {
          const value = (await c.req.parseBody())[CSRF_FIELD];
          sent = typeof value === 'string' ? value : undefined;
        }
      }
      if (sent !== session.csrfToken)
        throw csrfRefused.create('the CSRF token is missing or does not match this session; reload the page');
    }
    // One expiry: the cookie follows the server's sliding one (12 idle hours, 30 days at most),
    // so a browser never drops a session the server still honours.
    if (session.renewed) setSessionCookie(c, token!, session.expiresAt, isSecure(c, httpsPublicUrl));
    c.set('session', session);
    const actor: Actor = { kind: 'user', id: session.user.id };
    const access: Access = {
      actor,
      role: session.user.role,
      sites: scopeOf(session.user.role, session.user.scopeTags),
      userId: session.user.id,
    };
    c.set('actor', actor);
    c.set('access', access);
    // The same permission function as the API's (http/permissions.ts), with the dashboard's tables:
    // the role, then for a scoped user the page's scope (a site outside it is the not-found page).
    let refused;
    try {
      refused = await checkAccess(
        c,
        access,
        { rules: DASHBOARD_PERMISSIONS, scopeAware: DASHBOARD_SCOPE_AWARE },
        scope?.checkSite,
      );
    } catch (error) {
      if (scope && isAppError(error) && error.problem.status === 404) return scope.hidden(c, session);
      throw error;
    }
    if (refused) return refusedPage(c, session, refused.detail);
    await next();
    endStreamWithSession(c, users, session.sessionId);
  };
}

/** A role below what the page or form needs: a 403 page saying which role it needs, in the dashboard's layout. */
function refusedPage(c: Context, session: SignedInSession, detail: string) {
  return c.html(
    page({
      title: 'Not allowed',
      session,
      current: '',
      body: html`<h1>Not allowed</h1>
        <p>${detail}.</p>
        <p><a href="/">Back to the overview</a> · <a href="/settings/account">Your account</a></p>`,
    }),
    403,
  );
}

/**
 * How often an open event stream asks the database whether its session is still live (one lookup
 * by primary key): a session another process ended (the CLI's `users set-role`, `users
 * reset-password`), or one that expired, closes its streams within this long.
 */
export const STREAM_SESSION_CHECK_MS = 2_000;

/**
 * An event stream (the activity page's /events) outlives the request that opened it: it is
 * closed when its session ends (sign-out, a password reset), so a signed-out browser gets no more
 * events. In this process the end is told at once (watchSession); an end written by another
 * process, or an expiry, is seen on the stream's heartbeat (STREAM_SESSION_CHECK_MS). Aborting the
 * pipe cancels the stream's source (its onAbort runs, the handler stops), and the response is then
 * closed as a finished one.
 */
function endStreamWithSession(c: Context, users: UsersService, sessionId: string): void {
  const body = c.res.body;
  if (!body || !c.res.headers.get('content-type')?.startsWith('text/event-stream')) return;
  const ended = new AbortController();
  const unwatch = users.watchSession(sessionId, () => ended.abort());
  const heartbeat = setInterval(() => {
    users.isSessionLive(sessionId).then(
      (live) => {
        if (!live) ended.abort();
      },
      // The database is gone (shutting down): nothing can say the session is live.
      () => ended.abort(),
    );
  }, STREAM_SESSION_CHECK_MS).unref();
  const stopWatching = () => {
    clearInterval(heartbeat);
    unwatch();
  };
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  // On the session's end the source is cancelled and the response then ENDS (its last chunk sent),
  // rather than being cut: a browser reads a cut stream as a network error.
  body
    .pipeTo(writable, { signal: ended.signal, preventAbort: true })
    .catch(() => writable.close())
    .catch(() => undefined)
    .finally(stopWatching);
  c.res = new Response(readable, c.res);
}

export const FLASH_COOKIE = 'sw_flash';
export type Flash = { kind: 'ok' | 'error'; text: string };

/** A message for the next page after a redirect (post/redirect/get), in a short-lived cookie rather than the URL. */
export function setFlash(c: Context, flash: Flash): void {
  setCookie(c, FLASH_COOKIE, `${flash.kind}:${flash.text.slice(0, 500)}`, {
    httpOnly: true,
    sameSite: 'Strict',
    path: '/',
    maxAge: 60,
  });
}

/** The flash the last action left, once. */
export function takeFlash(c: Context): Flash | null {
  const value = getCookie(c, FLASH_COOKIE);
  if (!value) return null;
  deleteCookie(c, FLASH_COOKIE, { path: '/' });
  const kind = value.startsWith('ok:') ? 'ok' : 'error';
  return { kind, text: value.slice(value.indexOf(':') + 1) };
}

/** Runs a form's work and leaves the outcome as the flash: its message, or the detail of a problem a user can cause. */
export async function flashOutcome(c: Context, work: () => Promise<string> | string): Promise<void> {
  try {
    setFlash(c, { kind: 'ok', text: await work() });
  } catch (error) {
    if (!isAppError(error)) throw error;
    setFlash(c, { kind: 'error', text: error.detail });
  }
}
