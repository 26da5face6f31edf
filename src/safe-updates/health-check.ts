import { isAppError } from '../shared/errors.js';
import type { SiteHttp } from '../wordpress/site-http.js';
import type { ConnectedSite } from '../wordpress/site-access.js';
import type { Check, HealthReport, SafeUpdatePolicy } from './safe-updates.schemas.js';

/** A page larger than this is not read further (the site is untrusted); what came is checked. */
const MAX_PAGE_BYTES = 2 * 1024 * 1024;

/**
 * What PHP and WordPress print when a request dies: PHP's own error display, WordPress's
 * fatal-error handler page (5.2+), and the older recovery-mode text.
 */
const FATAL_MARKERS = [
  'Fatal error',
  'There has been a critical error on this website',
  'The site is experiencing technical difficulties',
];

export function findFatalMarker(body: string): string | undefined {
  return FATAL_MARKERS.find((marker) => body.includes(marker));
}

/** The home page, then the policy's paths on the same site. */
export function pageUrls(siteUrl: string, policy: Pick<SafeUpdatePolicy, 'urls'>): string[] {
  const base = siteUrl.replace(/\/+$/, '');
  return [`${base}/`, ...policy.urls.map((path) => `${base}${path}`)];
}

/**
 * One round of checks: the home page and the policy's URLs answer 2xx/3xx without a fatal
 * error (the home page with the keyword), the REST API answers for our user, the connector answers.
 */
export async function checkSiteHealth(
  { http, site, now }: { http: SiteHttp; site: ConnectedSite; now: () => Date },
  policy: SafeUpdatePolicy,
  attempt = 1,
): Promise<HealthReport> {
  const started = Date.now();
  const at = now().toISOString();
  const pages = pageUrls(site.site.url, policy);
  const home = pages[0]!;

  const pageCheck = async (url: string): Promise<Check> => {
    const begun = Date.now();
    const done = (fields: Omit<Check, 'name' | 'url' | 'durationMs'>): Check => ({
      name: 'page',
      url,
      ...fields,
      durationMs: Date.now() - begun,
    });
    try {
      const response = await http.request({
        url,
        timeoutMs: policy.checkTimeoutMs,
        maxBytes: MAX_PAGE_BYTES,
        followRedirects: false,
      });
      const body = response.text();
      if (response.status < 200 || response.status >= 400)
        return done({
          ok: false,
          status: response.status,
          problem: findFatalMarker(body) ? 'fatal-error' : `http-${response.status}`,
        });
      if (findFatalMarker(body)) return done({ ok: false, status: response.status, problem: 'fatal-error' });
      if (url === home && policy.keyword && !body.includes(policy.keyword))
        return done({ ok: false, status: response.status, problem: 'keyword-missing' });
      return done({ ok: true, status: response.status });
    } catch (error) {
      return done({ ok: false, problem: isAppError(error) ? error.problem.name : 'site-unreachable' });
    }
  };

  const timed = async (name: 'rest' | 'connector', work: () => Promise<boolean>): Promise<Check> => {
    const begun = Date.now();
    try {
      const ok = await work();
      return { name, ok, ...(ok ? {} : { problem: 'connector-missing' }), durationMs: Date.now() - begun };
    } catch (error) {
      const problem = isAppError(error) ? error.problem.name : 'site-unreachable';
      return { name, ok: false, problem, durationMs: Date.now() - begun };
    }
  };

  const checks = await Promise.all([
    ...pages.map(pageCheck),
    timed('rest', async () => (await site.session.currentUser()).id > 0),
    timed('connector', async () => (await site.connector.infoNow()) !== null),
  ]);
  return { healthy: checks.every((check) => check.ok), at, durationMs: Date.now() - started, attempt, checks };
}

/** Why a report is unhealthy, in a few words for the job's message. */
export function describeFailures(report: HealthReport): string {
  return report.checks
    .filter((check) => !check.ok)
    .map(
      (check) => `${check.url ?? check.name}: ${check.problem ?? (check.status ? `HTTP ${check.status}` : 'failed')}`,
    )
    .join('; ');
}

/** The first failure's problem (`fatal-error`, `http-500`, …): the reason a rollback records. */
export const firstProblem = (report: HealthReport): string =>
  report.checks.find((check) => !check.ok)?.problem ?? 'unhealthy';
