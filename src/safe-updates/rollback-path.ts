import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { SecretBox } from '../shared/secret-box.js';
import {
  createRestorePoints,
  createStandaloneRollback,
  rollbackProblems,
  type StandaloneRollback,
} from '../wordpress/rollback-client.js';
import type { ConnectedSite } from '../wordpress/site-access.js';
import type { SiteHttp } from '../wordpress/site-http.js';
import type { SafeUpdatesRepository } from './safe-updates.repository.js';

/**
 * A site's standalone rollback path (sitewarden-rollback.php) and the secret it answers to: the
 * site keeps its SHA-256, we keep it sealed. Shared by safe updates and plain updates' restore points.
 */
export function createRollbackPaths({
  repository,
  http,
  secrets,
  clock,
  operationTimeoutMs,
}: {
  repository: Pick<SafeUpdatesRepository, 'readSecret' | 'writeSecret'>;
  http: SiteHttp;
  secrets: SecretBox;
  clock: Clock;
  operationTimeoutMs: number;
}) {
  /** A fresh secret: the site gets its SHA-256, we keep it sealed. */
  async function provisionSecret(site: ConnectedSite): Promise<string> {
    const secret = randomBytes(32).toString('base64url');
    await createRestorePoints(site.session, { timeoutMs: operationTimeoutMs }).provisionSecret(
      createHash('sha256').update(secret).digest('hex'),
    );
    repository.writeSecret(site.site.id, secrets.seal(secret), clock.now());
    return secret;
  }

  /**
   * The site's standalone rollback path, answering with our secret (provisioned now if the site
   * lacks it; that needs WordPress, the path itself does not once the secret is there).
   */
  async function rollbackPath(site: ConnectedSite): Promise<StandaloneRollback> {
    const sealed = repository.readSecret(site.site.id);
    let secret = sealed ? secrets.open(sealed) : await provisionSecret(site);
    let standalone = createStandaloneRollback(http, site.site.url, secret);
    let status = await standalone.status();
    if (status.status === 401 && sealed) {
      // The site lost its copy (a restore from an old backup, a reinstalled connector): provide it again.
      secret = await provisionSecret(site);
      standalone = createStandaloneRollback(http, site.site.url, secret);
      status = await standalone.status();
    }
    if (status.status !== 200)
      throw rollbackProblems.unavailable.create(
        status.status === 404
          ? `${standalone.url} is missing: the site's connector predates safe updates; upload the current one (GET /api/connector.zip)`
          : `${standalone.url} answered ${status.status}${status.code ? ` (${status.code})` : ''}`,
      );
    return standalone;
  }

  return { provisionSecret, rollbackPath };
}

export type RollbackPaths = ReturnType<typeof createRollbackPaths>;
