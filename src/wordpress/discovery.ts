import { isProblem } from '../shared/errors.js';
import type { SiteHttp, SiteResponse } from './site-http.js';
import { siteHttpProblems } from './site-http.js';
import { RestIndexSchema, type RestIndex } from './site-schemas.js';
import { checkSiteAnswer } from './wordpress-client.js';
import { wordpressProblems } from './wordpress.errors.js';

export interface DiscoveredSite {
  /** The site's home URL as WordPress reports it, normalised. */
  homeUrl: string;
  restUrl: string;
  name: string | null;
  /** wp-admin/authorize-application.php, present when application passwords are available. */
  authorizationEndpoint: string | null;
}

const DISCOVERY_MAX_BYTES = 2 * 1024 * 1024;

/**
 * Finds a site's REST API the way WordPress documents it: the `Link: <…>; rel="https://api.w.org/"`
 * header (or the same `<link>` in the page head), falling back to `?rest_route=/` for sites
 * without pretty permalinks, then reads the index to confirm it is WordPress.
 */
export async function discoverSite(http: SiteHttp, url: string): Promise<DiscoveredSite> {
  const home = await http.request({ url, maxBytes: DISCOVERY_MAX_BYTES });
  const candidates = [
    findApiLink(home),
    new URL('?rest_route=/', withSlash(home.url)).toString(),
    new URL('wp-json/', withSlash(url)).toString(),
  ].filter((candidate): candidate is string => candidate !== null);

  for (const restUrl of [...new Set(candidates)]) {
    const index = await readIndex(http, restUrl);
    if (!index) continue;
    const appPasswords = Array.isArray(index.authentication)
      ? undefined
      : index.authentication?.['application-passwords'];
    const homeUrl = normaliseSiteUrl(index.home ?? index.url ?? url);
    const authorization = appPasswords?.endpoints?.authorization;
    return {
      homeUrl,
      restUrl,
      name: index.name ?? null,
      authorizationEndpoint:
        authorization === undefined ? null : checkAuthorizationEndpoint(authorization, homeUrl, restUrl),
    };
  }
  throw wordpressProblems.notWordPress.create(
    `${url} answered HTTP ${home.status} but does not offer the WordPress REST API`,
  );
}

async function readIndex(http: SiteHttp, restUrl: string): Promise<RestIndex | null> {
  let response: SiteResponse;
  try {
    response = await http.request({ url: restUrl, maxBytes: DISCOVERY_MAX_BYTES });
  } catch (error) {
    // A garbled or oversized answer at one candidate just means "not here".
    if (isProblem(error, siteHttpProblems.invalidResponse, siteHttpProblems.tooLarge)) return null;
    throw error;
  }
  if (response.status !== 200) return null;
  let index: unknown;
  try {
    index = response.json();
  } catch {
    return null;
  }
  // Only an index naming wp/v2 is WordPress's; once it is, the rest of it must have the right shape.
  const namespaces = (index as { namespaces?: unknown } | null)?.namespaces;
  if (!Array.isArray(namespaces) || !namespaces.includes('wp/v2')) return null;
  return checkSiteAnswer(RestIndexSchema, index, restUrl);
}

/**
 * The authorize-application URL reaches a person (as `authorizeUrl`, a link in a dashboard), so
 * it must be an http(s) page of the site itself: on the host of its home URL or of its REST API
 * (WordPress serves wp-admin from its "WordPress Address", which may differ from the home's
 * host). Any port; no credentials. Anything else (`javascript:`, `data:`, another host) is refused.
 */
function checkAuthorizationEndpoint(endpoint: string, homeUrl: string, restUrl: string): string {
  let url: URL | null = null;
  try {
    url = new URL(endpoint);
  } catch {
    // Refused below like any other unusable address.
  }
  const ownHosts = new Set([new URL(homeUrl).hostname, new URL(restUrl).hostname]);
  const usable =
    url !== null &&
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    ownHosts.has(url.hostname) &&
    !url.username &&
    !url.password;
  if (!usable) {
    throw siteHttpProblems.invalidResponse.create(
      `the site's REST index names ${JSON.stringify(endpoint.slice(0, 200))} as its authorize-application page; Sitewarden only sends administrators to an http(s) page on the site's own host (${[...ownHosts].join(' or ')})`,
      {
        authorizationUrl: endpoint.slice(0, 2048),
      },
    );
  }
  return url!.toString();
}

function findApiLink(response: SiteResponse): string | null {
  const header = response.headers.link;
  const links = Array.isArray(header) ? header.join(',') : (header ?? '');
  for (const part of links.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]+)>\s*;(.*)$/.exec(part);
    if (match && /rel\s*=\s*"?https:\/\/api\.w\.org\/"?/.test(match[2]!))
      return new URL(match[1]!, response.url).toString();
  }
  const contentType = String(response.headers['content-type'] ?? '');
  if (contentType.includes('html')) {
    const tag = /<link[^>]+rel=["']https:\/\/api\.w\.org\/["'][^>]*>/i.exec(response.text());
    const href = tag && /href=["']([^"']+)["']/i.exec(tag[0]);
    if (href) return new URL(href[1]!.replace(/&amp;/g, '&'), response.url).toString();
  }
  return null;
}

/** Scheme, host (lower-case), port and path without a trailing slash; no query, fragment or credentials. */
export function normaliseSiteUrl(input: string): string {
  const url = new URL(input);
  url.hash = '';
  url.search = '';
  url.username = '';
  url.password = '';
  return url.toString().replace(/\/+$/, '');
}

const withSlash = (url: string) => (url.endsWith('/') ? url : `${url}/`);
