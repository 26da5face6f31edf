import type { SecretBox } from '../shared/secret-box.js';
import { isProblem } from '../shared/errors.js';
import { discoverSite, normaliseSiteUrl, type DiscoveredSite } from '../wordpress/discovery.js';
import type { SiteHttp } from '../wordpress/site-http.js';
import type { WordPressClient } from '../wordpress/wordpress-client.js';
import { wordpressProblems } from '../wordpress/wordpress.errors.js';
import { sitesProblems } from './sites.errors.js';

/**
 * What a site must pass before it is connected: a URL of its own (http or https, no credentials
 * in it), discovery that finds its REST API offering application passwords, and credentials the
 * site accepts for a user with every capability Sitewarden acts with (what a connected row then
 * stores: the user, the sealed password and the password's uuid on the site).
 */

/** What Sitewarden does on a site needs these; an administrator on a single site has them all. */
const REQUIRED_CAPABILITIES = [
  'activate_plugins',
  'install_plugins',
  'update_plugins',
  'delete_plugins',
  'switch_themes',
  'update_themes',
  'delete_themes',
] as const;

export function createSiteChecks({
  http,
  wordpress,
  secrets,
}: {
  http: SiteHttp;
  wordpress: WordPressClient;
  secrets: SecretBox;
}) {
  function parseUrl(input: string): string {
    let url: URL;
    try {
      url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(input.trim()) ? input.trim() : `https://${input.trim()}`);
    } catch {
      throw sitesProblems.invalidUrl.create(`"${input}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw sitesProblems.invalidUrl.create(
        `only http and https sites can be connected, not ${url.protocol.replace(':', '')}`,
      );
    if (url.username || url.password)
      throw sitesProblems.invalidUrl.create(
        'the URL must not contain credentials; pass username and applicationPassword instead',
      );
    if (!url.hostname) throw sitesProblems.invalidUrl.create('the URL has no host');
    return normaliseSiteUrl(url.toString());
  }

  /** Checks the credentials against the site and returns what a connected row stores. */
  async function verifyCredentials(restUrl: string, username: string, applicationPassword: string) {
    const session = wordpress.session({ restUrl, username, applicationPassword });
    let user;
    try {
      user = await session.currentUser();
    } catch (error) {
      if (isProblem(error, wordpressProblems.credentialsRejected)) {
        throw wordpressProblems.credentialsRejected.create(
          `the site did not accept the application password for ${username}: ${error.detail}`,
          error.extensions,
        );
      }
      throw error;
    }
    const missing = REQUIRED_CAPABILITIES.filter((capability) => !user.capabilities[capability]);
    if (missing.length > 0) {
      throw wordpressProblems.insufficientCapabilities.create(
        `${user.username} lacks ${missing.join(', ')}; connect as an administrator`,
        { missingCapabilities: missing, roles: user.roles },
      );
    }
    const uuid = await session.currentApplicationPasswordUuid();
    return {
      username: user.username,
      credentialSealed: secrets.seal(applicationPassword),
      applicationPasswordUuid: uuid,
    };
  }

  async function discover(url: string): Promise<DiscoveredSite> {
    const discovered = await discoverSite(http, url);
    if (!discovered.authorizationEndpoint) {
      throw wordpressProblems.applicationPasswordsUnavailable.create(
        `${discovered.homeUrl} does not offer application passwords (WordPress 5.6+ needs HTTPS, or WP_ENVIRONMENT_TYPE=local, and no plugin disabling them)`,
      );
    }
    return discovered;
  }

  return { parseUrl, verifyCredentials, discover };
}

export type SiteChecks = ReturnType<typeof createSiteChecks>;
