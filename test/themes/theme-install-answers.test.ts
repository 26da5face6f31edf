import { afterEach, describe, expect, it } from 'vitest';
import { startFakeWordPress, type FakeWordPress } from '../support/fake-wordpress/index.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * A theme install's answer comes from an untrusted site: anything but a theme folder name, its name,
 * version and active flag is a 502 `site-invalid-response`, never a 500 nor a half-understood success.
 */
let t: TestApp;
let site: FakeWordPress | undefined;
afterEach(async () => {
  await site?.close();
  await t?.close();
});

async function connected(connector = '1.8.0') {
  site = await startFakeWordPress({});
  const info = site.answers['GET sitewarden/v1/info'] as Record<string, unknown>;
  site.answers['GET sitewarden/v1/info'] = { ...info, connector };
  t = createTestApp();
  const answer = await t.call('POST', '/api/sites', {
    json: { url: site.url, username: site.username, applicationPassword: site.applicationPassword },
  });
  expect(answer.status, answer.text).toBe(201);
  return { site, id: answer.json.id as string };
}

describe('installing a theme on a site that answers badly', () => {
  it.each([
    ['a folder that climbs out', { stylesheet: '../wp-config', name: 'x', version: '1.0', active: false }],
    ['no folder', { name: 'x', version: '1.0', active: false }],
    ['an overlong name', { stylesheet: 'neat', name: 'x'.repeat(501), version: '1.0', active: false }],
    ['a non-boolean active', { stylesheet: 'neat', name: 'Neat', version: '1.0', active: 'yes' }],
    ['an array', []],
  ])('refuses %s with site-invalid-response', async (_, answer) => {
    const { site, id } = await connected();
    site.answers['POST sitewarden/v1/themes/install'] = answer;
    const response = await t.call('POST', `/api/sites/${id}/themes/install`, { json: { slug: 'neat' } });
    expect(response.status, response.text).toBe(502);
    expect(response.json.type).toBe('/problems/site-invalid-response');
    expect(response.json.detail).toContain('sitewarden/v1/themes/install');
  });

  it('asks an older connector nothing: connector-outdated names 1.8.0 and where to download it', async () => {
    const { site, id } = await connected('1.7.0');
    const response = await t.call('POST', `/api/sites/${id}/themes/install`, { json: { slug: 'neat' } });
    expect(response.status, response.text).toBe(422);
    expect(response.json).toMatchObject({
      type: '/problems/connector-outdated',
      feature: 'themes/install',
      connectorVersion: '1.7.0',
      requiredVersion: '1.8.0',
    });
    expect(response.json.detail).toContain('/connector.zip');
    expect(site.requests).not.toContain('sitewarden/v1/themes/install');
  });
});
