/**
 * Someone limited to some site tags (team access, docs/design/team-access.md), as the site-scope tests
 * build them: a user of a role scoped to tags, an API token of that user, and the user signed in on the
 * dashboard (its session cookie, and pages read and forms posted with it).
 */
import type { Role } from '../../src/shared/actor.js';
import type { TestApp } from './test-app.js';

const PASSWORD = 'correct horse battery staple';

/**
 * A user `username` of `role` limited to `tags`, with a token (`tokenName`, by default `<username>-token`)
 * and a session: `get` reads a page with its cookie, `post` sends a form with its cookie and CSRF field.
 */
export async function scopedPrincipal(
  t: TestApp,
  {
    username,
    role,
    tags,
    tokenName = `${username}-token`,
  }: { username: string; role: Role; tags: string[]; tokenName?: string },
) {
  const user = await t.services.users.create(username, PASSWORD, role);
  await t.services.users.setScope(user.id, tags);
  const token = (await t.services.tokens.create(tokenName, role, { userId: user.id })).token;
  const signedIn = await t.app.request('/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username, password: PASSWORD }).toString(),
  });
  const session = /sw_session=[^;]+/.exec(signedIn.headers.get('set-cookie') ?? '');
  if (!session) throw new Error(`${username} could not sign in: ${signedIn.status} ${await signedIn.text()}`);
  const cookie = session[0];
  const get = (path: string) => t.app.request(path, { headers: { cookie } });
  // Read from the first page only when a form is posted: a setup that only reads pages makes no other request.
  let csrf: string | undefined;
  const post = async (path: string, form: Record<string, string> = {}) => {
    csrf ??= /data-csrf="([^"]+)"/.exec(await (await get('/')).text())![1]!;
    return t.app.request(path, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...form, _csrf: csrf }).toString(),
    });
  };
  return { user, token, cookie, get, post };
}
