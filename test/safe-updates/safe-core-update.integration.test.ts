import { describe, expect, it } from 'vitest';
import { createSafeUpdatesRepository } from '../../src/safe-updates/index.js';
import { useConnectedSite } from '../support/wordpress-state.js';
import { fetchWhole } from '../support/fetch-whole.js';

/** WordPress core (Debian's 6.1.9) through the same safe-update path, and its restore point put back without WordPress. */
const bed = useConnectedSite();

const wordpressVersion = async () => bed.site.php('global $wp_version; echo $wp_version;');

describe('a safe core update', { timeout: 240_000 }, () => {
  let report: { id: string; steps: { step: string; detail?: string }[] };

  it('updates WordPress to the version asked for, checks the site and keeps it', async () => {
    // The loopback mirror offers core releases only to a site that asks for them (its test mu-plugin).
    await bed.site.php(`update_site_option( 'sitewarden_test_offer_core', 1 );`);
    const started = await bed.t.call('POST', `/api/sites/${bed.siteId}/core/safe-update`, {
      json: { version: '6.2.6', policy: { settleMs: 300, attempts: 2, retryDelayMs: 500, backup: false } },
    });
    expect(started.status, started.text).toBe(202);
    await bed.t.services.safeUpdates.idle();
    report = (await bed.t.call('GET', `/api/sites/${bed.siteId}/safe-updates/${started.json.id}`)).json;
    expect(report).toMatchObject({
      status: 'kept',
      type: 'core',
      slug: 'wordpress',
      fromVersion: '6.1.9',
      toVersion: '6.2.6',
    });
    expect(report.steps.map((step) => step.step)).toEqual([
      'screenshots-before',
      'restore-point',
      'update',
      'screenshots-after',
    ]);
    expect(await wordpressVersion()).toBe('6.2.6');
    expect(bed.t.logs.events('update.verified')).toContainEqual(
      expect.objectContaining({ type: 'core', toVersion: '6.2.6' }),
    );
  });

  it('puts the previous core back through the standalone path, without WordPress', async () => {
    const repository = createSafeUpdatesRepository(bed.t.state);
    const row = (await repository.find(report.id))!;
    const sealed = (await repository.readSecret(bed.siteId))!;
    const response = await fetchWhole(
      `${bed.site.url}/wp-content/plugins/sitewarden-connector/sitewarden-rollback.php`,
      {
        method: 'POST',
        headers: { 'x-sitewarden-rollback-secret': bed.t.services.secrets.open(sealed) },
        body: JSON.stringify({ action: 'restore', id: row.restorePointId, target: 'core' }),
      },
    );
    expect(response.status, await response.text()).toBe(200);
    expect(await wordpressVersion()).toBe('6.1.9');
    expect((await fetchWhole(`${bed.site.url}/`)).status).toBe(200);
    expect((await bed.t.call('GET', `/api/sites/${bed.siteId}/plugins`)).status).toBe(200);
  });
});
