import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain ESM script without type declarations
import { packConnector } from '../../scripts/pack-connector.mjs';
import { createTestApp, type TestApp } from '../support/test-app.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
});

describe('downloading the connector', () => {
  it('serves the packed plugin zip to token holders', async () => {
    const outPath = join(mkdtempSync(join(tmpdir(), 'sw-connector-')), 'sitewarden-connector.zip');
    packConnector({ outPath });
    t = createTestApp({ connectorZipPath: outPath });
    expect((await t.app.request('/api/connector.zip')).status).toBe(401);
    const response = await t.app.request('/api/connector.zip', { headers: { authorization: `Bearer ${t.readToken}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/zip');
    expect(response.headers.get('content-disposition')).toContain('sitewarden-connector.zip');
    const downloaded = join(mkdtempSync(join(tmpdir(), 'sw-download-')), 'download.zip');
    writeFileSync(downloaded, Buffer.from(await response.arrayBuffer()));
    const names = execFileSync('unzip', ['-Z1', downloaded], { encoding: 'utf8' }).trim().split('\n');
    expect(names).toContain('sitewarden-connector/sitewarden-connector.php');
    expect(names.every((name) => name.startsWith('sitewarden-connector/'))).toBe(true);
  });

  it('says how to build it when it is missing', async () => {
    t = createTestApp({ connectorZipPath: '/nonexistent/sitewarden-connector.zip' });
    const response = await t.call('GET', '/api/connector.zip');
    expect(response.status).toBe(404);
    expect(response.json.type).toBe('/problems/connector-package-missing');
    expect(response.json.detail).toContain('npm run build');
  });
});
