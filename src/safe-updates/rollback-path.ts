import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { SecretBox } from '../shared/secret-box.js';
import {
  createRestorePoints,
  createStandaloneRollback,
  rollbackProblems,
  type StandaloneAnswer,
  type StandaloneRollback,
} from '../wordpress/rollback-client.js';
import type { ConnectedSite } from '../wordpress/site-access.js';
import type { SiteHttp } from '../wordpress/site-http.js';
import type { SafeUpdatesRepository } from './safe-updates.repository.js';

/**
 * How long a path that answered with our secret is taken as proven without asking it again. The
 * path allows 30 requests a minute per site (connector RATE_LIMIT): a plain bulk run of many items
 * on one site would spend that on probes alone, so one probe per site per minute at most.
 */
const PROVEN_FOR_MS = 60_000;

/**
 * A site's standalone rollback path (sitewarden-rollback.php) and the secret it answers to: the
 * site keeps its SHA-256, we keep it sealed. Shared by safe updates and plain updates' restore points.
 * A path proven to answer is kept for a minute per site (the same URL and sealed secret), and
 * forgotten as soon as it answers anything but 200; a 401 from a kept one (the site lost its
 * secret since) is retried once through a fresh probe, which provides the secret again.
 */
export function createRollbackPaths({
  repository,
  http,
  secrets,
  clock,
  operationTimeoutMs,
  sleep,
  nowMs = Date.now,
}: {
  repository: Pick<SafeUpdatesRepository, 'readSecret' | 'writeSecret'>;
  http: SiteHttp;
  secrets: SecretBox;
  clock: Clock;
  operationTimeoutMs: number;
  /** How a rate-limited (429) request waits for its `Retry-After`; default a timer. */
  sleep?: (ms: number) => Promise<void>;
  /** Monotonic enough for the minute a proven path is kept. */
  nowMs?: () => number;
}) {
  const proven = new Map<string, { url: string; sealed: string; until: number; path: StandaloneRollback }>();

  /** A fresh secret: the site gets its SHA-256, we keep it sealed. */
  async function provisionSecret(site: ConnectedSite): Promise<string> {
    const secret = randomBytes(32).toString('base64url');
    await createRestorePoints(site.session, { timeoutMs: operationTimeoutMs }).provisionSecret(
      createHash('sha256').update(secret).digest('hex'),
    );
    await repository.writeSecret(site.site.id, secrets.seal(secret), clock.now());
    proven.delete(site.site.id);
    return secret;
  }

  /** Asks the path now (its `status`), providing the secret first when the site lacks it or lost it. */
  async function probe(site: ConnectedSite): Promise<StandaloneRollback> {
    const sealed = await repository.readSecret(site.site.id);
    let secret = sealed ? secrets.open(sealed) : await provisionSecret(site);
    let standalone = createStandaloneRollback(http, site.site.url, secret, { sleep });
    let status = await standalone.status();
    if (status.status === 401 && sealed) {
      // The site lost its copy (a restore from an old backup, a reinstalled connector): provide it again.
      secret = await provisionSecret(site);
      standalone = createStandaloneRollback(http, site.site.url, secret, { sleep });
      status = await standalone.status();
    }
    if (status.status !== 200)
      throw rollbackProblems.unavailable.create(
        status.status === 404
          ? `${standalone.url} is missing: the site's connector predates safe updates; upload the current one (GET /api/connector.zip)`
          : `${standalone.url} answered ${status.status}${status.code ? ` (${status.code})` : ''}`,
      );
    const kept = await repository.readSecret(site.site.id);
    if (kept)
      proven.set(site.site.id, {
        url: site.site.url,
        sealed: kept,
        until: nowMs() + PROVEN_FOR_MS,
        path: guarded(site, standalone),
      });
    return standalone;
  }

  /** The proven path, forgotten when it answers anything but 200 (or fails); a 401 is tried once more, freshly probed. */
  function guarded(site: ConnectedSite, standalone: StandaloneRollback): StandaloneRollback {
    const forget = () => {
      if (proven.get(site.site.id)?.path === path) proven.delete(site.site.id);
    };
    const guard =
      <A extends unknown[], R extends StandaloneAnswer>(
        call: (path: StandaloneRollback) => (...args: A) => Promise<R>,
      ) =>
      async (...args: A): Promise<R> => {
        let answer: R;
        try {
          answer = await call(standalone)(...args);
        } catch (error) {
          forget();
          throw error;
        }
        if (answer.status === 200) return answer;
        forget();
        return answer.status === 401 ? call(await probe(site))(...args) : answer;
      };
    const path: StandaloneRollback = {
      url: standalone.url,
      status: guard((path) => path.status),
      version: guard((path) => path.version),
      restore: guard((path) => path.restore),
    };
    return path;
  }

  /**
   * The site's standalone rollback path, answering with our secret (provisioned now if the site
   * lacks it; that needs WordPress, the path itself does not once the secret is there). Asked at
   * most once a minute per site while it keeps answering 200.
   */
  async function rollbackPath(site: ConnectedSite): Promise<StandaloneRollback> {
    const kept = proven.get(site.site.id);
    if (
      kept &&
      kept.url === site.site.url &&
      kept.until > nowMs() &&
      kept.sealed === (await repository.readSecret(site.site.id))
    )
      return kept.path;
    proven.delete(site.site.id);
    const standalone = await probe(site);
    return proven.get(site.site.id)?.path ?? standalone;
  }

  return { provisionSecret, rollbackPath };
}

export type RollbackPaths = ReturnType<typeof createRollbackPaths>;
