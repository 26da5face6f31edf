import { STYLESHEET } from '../../src/dashboard/stylesheet.js';
import type { TestApp } from '../support/test-app.js';

const PASSWORD = 'correct horse battery staple';

/**
 * A dashboard user signed in on a test app: `get`, `post` (a form, with the CSRF field unless
 * told not to) and `follow` (a post/redirect/get, carrying the flash cookie the action set).
 */
export async function signIn(t: TestApp, username = 'alice') {
  await t.services.users.create(username, PASSWORD);
  const signedIn = await t.app.request('/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username, password: PASSWORD }).toString(),
  });
  const cookie = /sw_session=[^;]+/.exec(signedIn.headers.get('set-cookie')!)![0];
  const get = (path: string) => t.app.request(path, { headers: { cookie } });
  const csrf = /data-csrf="([^"]+)"/.exec(await (await get('/')).text())![1]!;
  const post = (path: string, form: Record<string, string> | [string, string][], withCsrf = true) => {
    const body = new URLSearchParams(form);
    if (withCsrf) body.append('_csrf', csrf);
    return t.app.request(path, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    });
  };
  async function follow(response: Response) {
    const flash = /sw_flash=[^;]+/.exec(response.headers.get('set-cookie') ?? '')?.[0];
    const next = await t.app.request(response.headers.get('location')!, {
      headers: { cookie: flash ? `${cookie}; ${flash}` : cookie },
    });
    return next.text();
  }
  return { cookie, csrf, get, post, follow, password: PASSWORD };
}
export type SignedIn = Awaited<ReturnType<typeof signIn>>;

/**
 * A page with no inline code but the dashboard's own stylesheet (the one inline style, which
 * the CSP allows by its hash): no inline script, no other `<style>`, no style or on… attribute.
 */
export function withoutOwnStylesheet(page: string): string {
  return page.replace(`<style>${STYLESHEET}</style>`, '');
}
export const NO_INLINE_CODE = /<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i;
