import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSafeUpdatesRepository } from '../../src/safe-updates/index.js';
import { installFixturePlugin, useConnectedSite } from '../support/wordpress-state.js';
import { fetchWhole } from '../support/fetch-whole.js';

/**
 * The standalone rollback path (connector/sitewarden-rollback.php) is reachable by anyone who can
 * reach the site: it must refuse everything but a restore, with the secret, of what was saved.
 */
const bed = useConnectedSite();

const standaloneUrl = () => `${bed.site.url}/wp-content/plugins/sitewarden-connector/sitewarden-rollback.php`;

function post(body: unknown, secret?: string, method = 'POST') {
  return fetchWhole(standaloneUrl(), {
    method,
    headers: { 'content-type': 'application/json', ...(secret ? { 'x-sitewarden-rollback-secret': secret } : {}) },
    body: method === 'GET' ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
}

/** The connector's own route (inside WordPress), as the daemon calls it. */
async function saveRestorePoint(type: string, target: string) {
  const { username, applicationPassword } = bed.site.admin;
  const response = await fetch(`${bed.site.url}/?rest_route=/sitewarden/v1/rollback/save`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${username}:${applicationPassword}`).toString('base64')}`,
    },
    body: JSON.stringify({ type, target }),
  });
  return { status: response.status, json: (await response.json()) as { id: string; target: string; code?: string } };
}

async function storedSecret(): Promise<string> {
  const sealed = await createSafeUpdatesRepository(bed.t.state).readSecret(bed.siteId);
  expect(sealed, 'the daemon keeps a sealed rollback secret').toBeTruthy();
  return bed.t.services.secrets.open(sealed!);
}

describe('the standalone rollback path', () => {
  let secret: string;
  let saved: { id: string; target: string };
  const pluginFile = () => join(bed.site.root, 'wp-content/plugins/sitewarden-demo/sitewarden-demo.php');

  it('gets its secret through the API; the site keeps only its SHA-256, the daemon only a sealed copy', async () => {
    const provisioned = await bed.t.call('POST', `/api/sites/${bed.siteId}/rollback-secret`);
    expect(provisioned.status, provisioned.text).toBe(200);
    secret = await storedSecret();
    expect(secret.length).toBeGreaterThanOrEqual(40);
    const sealed = (await createSafeUpdatesRepository(bed.t.state).readSecret(bed.siteId))!;
    expect(sealed).not.toContain(secret);

    const onSite = readFileSync(join(bed.site.root, 'wp-content/sitewarden-rollback/secret.php'), 'utf8');
    expect(onSite).not.toContain(secret);
    expect(onSite).toContain(createHash('sha256').update(secret).digest('hex'));
    // Fetched over HTTP, the PHP file that holds the hash prints nothing.
    const served = await fetch(`${bed.site.url}/wp-content/sitewarden-rollback/secret.php`);
    expect(await served.text()).toBe('');
  });

  it('refuses a restore without the secret, with a wrong one, and anything but POST', async () => {
    installFixturePlugin(bed.site, 'sitewarden-demo', '1.0.0');
    const point = await saveRestorePoint('plugin', 'sitewarden-demo/sitewarden-demo.php');
    expect(point.status, JSON.stringify(point.json)).toBe(200);
    saved = point.json;
    expect(saved.target).toBe('plugins/sitewarden-demo');
    writeFileSync(pluginFile(), '<?php // changed after the restore point');

    const restore = { action: 'restore', id: saved.id, target: saved.target };
    const without = await post(restore);
    expect(without.status).toBe(401);
    expect(await without.json()).toEqual({ code: 'unauthorized' });
    const wrong = await post(restore, `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`);
    expect(wrong.status).toBe(401);
    expect((await post(restore, 'x'.repeat(10_000))).status).toBe(401);
    expect((await post(restore, secret, 'GET')).status).toBe(405);
    expect((await post(restore, secret, 'PUT')).status).toBe(405);
    expect(readFileSync(pluginFile(), 'utf8')).toContain('changed after the restore point');
  });

  it('refuses paths outside what it saved', async () => {
    const refusals: [unknown, number][] = [
      [{ action: 'restore', id: saved.id, target: 'plugins/akismet' }, 404],
      [{ action: 'restore', id: saved.id, target: 'themes/sitewarden-demo' }, 404],
      [{ action: 'restore', id: saved.id, target: '../../wp-config.php' }, 400],
      [{ action: 'restore', id: saved.id, target: 'plugins/../../wp-config.php' }, 400],
      [{ action: 'restore', id: saved.id, target: 'plugins/..' }, 400],
      [{ action: 'restore', id: saved.id, target: 'uploads/sitewarden-demo' }, 400],
      [{ action: 'restore', id: saved.id, target: '/etc/passwd' }, 400],
      [{ action: 'restore', id: '../secret', target: saved.target }, 400],
      [{ action: 'restore', id: '20200101000000-00000000', target: saved.target }, 404],
      [{ action: 'delete', path: 'wp-config.php' }, 400],
      ['not an object', 400],
    ];
    for (const [body, status] of refusals) {
      const response = await post(body, secret);
      expect(response.status, JSON.stringify(body)).toBe(status);
    }
    expect(readFileSync(pluginFile(), 'utf8')).toContain('changed after the restore point');
    expect(readFileSync(join(bed.site.root, 'wp-config.php'), 'utf8')).toContain('DB_NAME');
  });

  it('puts back exactly what it saved, once, with the secret', async () => {
    const status = await post({ action: 'status' }, secret);
    expect(status.status).toBe(200);
    expect(((await status.json()) as { saved: unknown[] }).saved).toContainEqual({
      id: saved.id,
      target: saved.target,
      restored: false,
    });

    const restored = await post({ action: 'restore', id: saved.id, target: saved.target }, secret);
    expect(restored.status).toBe(200);
    expect(await restored.json()).toEqual({ restored: 'plugins/sitewarden-demo', already: false });
    expect(readFileSync(pluginFile(), 'utf8')).toContain('Version: 1.0.0');
    // Asked again (a retry after a lost answer), it answers the same without touching anything.
    const again = await post({ action: 'restore', id: saved.id, target: saved.target }, secret);
    expect(await again.json()).toEqual({ restored: 'plugins/sitewarden-demo', already: true });
  });

  it('bounds the rate of requests, before looking at the secret', async () => {
    const answers: number[] = [];
    for (let i = 0; i < 35; i++) answers.push((await post({ action: 'status' }, 'wrong')).status);
    expect(answers).toContain(429);
    expect(answers.filter((status) => status !== 401 && status !== 429)).toEqual([]);
  });
});
