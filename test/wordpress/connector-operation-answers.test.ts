import { afterEach, describe, expect, it } from 'vitest';
import { startFakeWordPress } from '../support/fake-wordpress/index.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * The connector's answers to plugin status changes, core and translation updates are checked
 * like every other site answer: the wrong shape is a 502 `site-invalid-response` naming the
 * route, never a 500 nor a half-understood success; a connector without the route is outdated.
 */

let t: TestApp;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
  await t?.close();
});

async function connected(answers: Record<string, unknown>) {
  const site = await startFakeWordPress({ answers });
  closers.push(site.close);
  t = createTestApp();
  const answer = await t.call('POST', '/api/sites', {
    json: { url: site.url, username: 'admin', applicationPassword: 'abcd efgh ijkl mnop qrst uvwx' },
  });
  expect(answer.status, answer.text).toBe(201);
  return { site, id: answer.json.id as string };
}

function expectInvalidAnswerFrom(answer: { status: number; json: { type: string; detail: string } }, route: string) {
  expect(answer.status, JSON.stringify(answer.json)).toBe(502);
  expect(answer.json.type).toBe('/problems/site-invalid-response');
  expect(answer.json.detail).toContain(route);
}

describe('connector operation answers', () => {
  it.each([
    ['an unknown result', { result: 'maybe', plugin: 'hello-dolly/hello-dolly.php', status: 'active' }],
    ['a refusal naming a path instead of slugs', { result: 'refused', reason: 'dependencies-unmet', slugs: ['../x'] }],
    ['a refusal naming nothing', { result: 'refused', reason: 'required-by', slugs: [] }],
  ])('refuses a plugin activation answer that is %s', async (_, body) => {
    const { id } = await connected({ 'POST sitewarden/v1/plugins/activate': body });
    expectInvalidAnswerFrom(
      await t.call('POST', `/api/sites/${id}/plugins/hello-dolly/activate`),
      'sitewarden/v1/plugins/activate',
    );
  });

  it('maps a refusal to the problem naming the plugins', async () => {
    const { id } = await connected({
      'POST sitewarden/v1/plugins/deactivate': { result: 'refused', reason: 'required-by', slugs: ['woo-addon'] },
    });
    const refused = await t.call('POST', `/api/sites/${id}/plugins/akismet/deactivate`);
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json).toMatchObject({ type: '/problems/plugin-required-by', requiredBy: ['woo-addon'] });
  });

  it('refuses core and translation update answers of the wrong shape', async () => {
    const { id } = await connected({
      'POST sitewarden/v1/core/update': { previousVersion: '6.1.9', version: '<script>', databaseUpgraded: true },
      'POST sitewarden/v1/translations/update': { updated: [{ type: 'plugin', slug: 'x', language: '../../x' }] },
    });
    expectInvalidAnswerFrom(await t.call('POST', `/api/sites/${id}/core/update`), 'sitewarden/v1/core/update');
    expectInvalidAnswerFrom(
      await t.call('POST', `/api/sites/${id}/translations/update`),
      'sitewarden/v1/translations/update',
    );
  });

  it('calls a connector without the core and translation routes outdated, naming the feature', async () => {
    const { id } = await connected({});
    for (const [path, feature] of [
      ['/core/update', 'core'],
      ['/translations/update', 'translations'],
    ]) {
      const answer = await t.call('POST', `/api/sites/${id}${path}`);
      expect(answer.status, answer.text).toBe(422);
      expect(answer.json).toMatchObject({ type: '/problems/connector-outdated', feature });
    }
  });
});
