import { isAppError } from '../shared/errors.js';
import type { SiteHttp, SiteResponse } from './site-http.js';
import { wordpressProblems } from './wordpress.errors.js';

export interface DiscoveredSite {
  /** The site's home URL as WordPress reports it, normalised. */
  homeUrl: string;
  restUrl: string;
  name: string | null;
  /** wp-admin/authorize-application.php, present when application passwords are available. */
  authorizationEndpoint: string | null;
}

interface RestIndex {
  name?: string;
  home?: string;
  url?: string;
  namespaces?: string[];
  authentication?: { 'application-passwords'?: { endpoints?: { authorization?: string } } };
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
    const appPasswords = index.authentication?.['application-passwords'];
    return {
      homeUrl: normaliseSiteUrl(index.home ?? index.url ?? url),
      restUrl,
      name: index.name ?? null,
      authorizationEndpoint: appPasswords?.endpoints?.authorization ?? null,
    };
  }
  throw wordpressProblems.notWordPress.create(`${url} answered HTTP ${home.status} but does not offer the WordPress REST API`);
}

async function readIndex(http: SiteHttp, restUrl: string): Promise<RestIndex | null> {
  let response: SiteResponse;
  try {
    response = await http.request({ url: restUrl, maxBytes: DISCOVERY_MAX_BYTES });
  } catch (error) {
    // A garbled or oversized answer at one candidate just means "not here".
    if (isAppError(error) && (error.problem.name === 'site-invalid-response' || error.problem.name === 'site-response-too-large')) return null;
    throw error;
  }
  if (response.status !== 200) return null;
  let index: RestIndex;
  try {
    index = response.json<RestIndex>();
  } catch {
    return null;
  }
  return Array.isArray(index?.namespaces) && index.namespaces.includes('wp/v2') ? index : null;
}

function findApiLink(response: SiteResponse): string | null {
  const header = response.headers.link;
  const links = Array.isArray(header) ? header.join(',') : (header ?? '');
  for (const part of links.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]+)>\s*;(.*)$/.exec(part);
    if (match && /rel\s*=\s*"?https:\/\/api\.w\.org\/"?/.test(match[2]!)) return new URL(match[1]!, response.url).toString();
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
