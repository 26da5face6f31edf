/**
 * The connector's one-click sign-in link (connector 1.6.0+): its answer's shape, and the check that
 * the link an untrusted site answers points at that site's own origin.
 */
import { z } from 'zod';
import { CONNECTOR_NAMESPACE, type ConnectorGate } from './connector-gate.js';
import { siteHttpProblems } from './site-http.js';
import type { WordPressSession } from './wordpress-client.js';

/** The longest sign-in link accepted from a site: wp-login.php's address and a 64-digit token fit many times over. */
const ADMIN_LOGIN_URL_MAX = 2048;

/** A site's one-click sign-in link, as the connector answers it (checked again against the site's origin). */
const AdminLoginLinkSchema = z.object({
  url: z.string().max(ADMIN_LOGIN_URL_MAX).url(),
  expiresAt: z.iso.datetime({ offset: true }),
});
export type AdminLoginLink = z.infer<typeof AdminLoginLinkSchema>;

/**
 * A remote site is untrusted: the link it answers must be an http(s) address of its own origin
 * (`siteUrl`), with no user name or password in it, or the answer is site-invalid-response.
 */
function checkAdminLoginLink(link: AdminLoginLink, siteUrl: string): AdminLoginLink {
  const url = new URL(link.url);
  const fits =
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    url.origin === new URL(siteUrl).origin &&
    url.username === '' &&
    url.password === '';
  if (!fits)
    throw siteHttpProblems.invalidResponse.create(
      `the site's sign-in link is not an http(s) address on the site's own origin (${new URL(siteUrl).origin})`,
      { route: `${CONNECTOR_NAMESPACE}/admin-login` },
    );
  return { url: url.href, expiresAt: new Date(link.expiresAt).toISOString() };
}

export function createAdminLoginCalls(session: WordPressSession, { gated }: ConnectorGate) {
  return {
    /**
     * A single-use link, valid for about a minute, that signs the application password's user in
     * to wp-admin (connector 1.6.0+). The link is a secret: it goes to the browser, never to a log.
     */
    adminLoginLink: async (siteUrl: string): Promise<AdminLoginLink> =>
      checkAdminLoginLink(
        await gated('admin-login', () =>
          session.call('POST', `${CONNECTOR_NAMESPACE}/admin-login`, { schema: AdminLoginLinkSchema }),
        ),
        siteUrl,
      ),
  };
}
