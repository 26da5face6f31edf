import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../support/test-app.js';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

type Operation = { operationId?: string; responses: Record<string, unknown> };
type OpenApiDocument = { paths: Record<string, Record<string, Operation>> };

// Client generators name their methods after these: renaming one breaks every generated client.
// New routes add their own line; existing lines never change.
const STABLE_OPERATION_IDS: Record<string, string> = {
  'GET /health': 'getHealth',
  'PUT /sites/{id}/tags': 'setSiteTags',
  'GET /tags': 'listTags',
  'GET /fleet/updates': 'listFleetUpdates',
  'POST /fleet/refresh': 'refreshFleetInventory',
  'GET /fleet/plugins': 'listFleetPlugins',
  'GET /fleet/themes/{slug}': 'listFleetThemeSites',
  'POST /sites/{siteId}/core/update': 'updateCore',
  'POST /sites/{siteId}/translations/update': 'updateTranslations',
  'GET /jobs': 'listJobs',
  'GET /jobs/{jobId}': 'getJob',
  'POST /jobs/{jobId}/cancel': 'cancelJob',
  'GET /authorization/callback': 'completeSiteAuthorization',
  'GET /sites': 'listSites',
  'POST /sites': 'connectSite',
  'GET /sites/{id}': 'getSite',
  'DELETE /sites/{id}': 'disconnectSite',
  'PATCH /sites/{id}': 'updateSite',
  'GET /sites/{id}/settings': 'getSiteSettings',
  'GET /sites/{siteId}/uptime': 'getSiteUptime',
  'GET /sites/{siteId}/uptime/downtime': 'listSiteDowntime',
  'GET /sites/{siteId}/performance': 'listAudits',
  'POST /sites/{siteId}/performance': 'requestAudit',
  'GET /sites/{siteId}/performance/{auditId}': 'getAudit',
  'GET /sites/{siteId}/performance/{auditId}/report': 'getAuditReport',
  'GET /sites/{siteId}/backups': 'listBackups',
  'POST /sites/{siteId}/backups': 'createBackup',
  'GET /sites/{siteId}/backups/{backupId}': 'getBackup',
  'POST /sites/{siteId}/backups/{backupId}/verify': 'verifyBackup',
  'POST /sites/{siteId}/backups/{backupId}/repair': 'repairBackup',
  'GET /sites/{siteId}/backups/{backupId}/download': 'downloadBackup',
  'POST /sites/{siteId}/backups/{backupId}/restore': 'restoreBackup',
  'GET /sites/{siteId}/restores/{restoreId}': 'getRestore',
  'GET /sites/{siteId}/plugins': 'listPlugins',
  'POST /sites/{siteId}/plugins/install': 'installPlugin',
  'POST /sites/{siteId}/plugins/{slug}/update': 'updatePlugin',
  'POST /sites/{siteId}/plugins/{slug}/activate': 'activatePlugin',
  'POST /sites/{siteId}/plugins/{slug}/deactivate': 'deactivatePlugin',
  'DELETE /sites/{siteId}/plugins/{slug}': 'deletePlugin',
  'GET /sites/{siteId}/themes': 'listThemes',
  'POST /sites/{siteId}/themes/install': 'installTheme',
  'POST /sites/{siteId}/themes/{slug}/update': 'updateTheme',
  'POST /sites/{siteId}/themes/{slug}/activate': 'activateTheme',
  'DELETE /sites/{siteId}/themes/{slug}': 'deleteTheme',
  'GET /webhooks': 'listWebhooks',
  'POST /webhooks': 'createWebhook',
  'GET /webhooks/{id}': 'getWebhook',
  'PATCH /webhooks/{id}': 'updateWebhook',
  'DELETE /webhooks/{id}': 'deleteWebhook',
  'GET /webhooks/{id}/deliveries': 'listWebhookDeliveries',
  'POST /webhooks/{id}/test': 'testWebhook',
  'GET /connector.zip': 'downloadConnector',
  'GET /sites/{siteId}/inventory': 'getSiteInventory',
  'GET /update-policies': 'listUpdatePolicies',
  'POST /update-policies': 'createUpdatePolicy',
  'GET /update-policies/{id}': 'getUpdatePolicy',
  'PUT /update-policies/{id}': 'replaceUpdatePolicy',
  'DELETE /update-policies/{id}': 'deleteUpdatePolicy',
  'GET /update-policies/{id}/preview': 'previewUpdatePolicy',
  'GET /sites/{siteId}/update-policy': 'previewSiteUpdatePolicy',
  'POST /sites/{siteId}/admin-login': 'createAdminLoginLink',
};

// Public and without input: nothing a client sends can earn a 4xx (redocly.yaml says the same).
const WITHOUT_CLIENT_ERRORS = new Set(['GET /health']);

let doc: OpenApiDocument;
let dir: string;

beforeAll(async () => {
  doc = (await createTestApp().call('GET', '/api/openapi.json')).json as OpenApiDocument;
  dir = mkdtempSync(join(tmpdir(), 'sitewarden-openapi-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, operation })),
  );

describe('the OpenAPI document', () => {
  it('passes redocly lint (recommended rules, redocly.yaml) with no error and no warning, 4xx answers documented', async () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    // --format=json exits 0 on warnings, so the totals decide; the env keeps redocly from calling home.
    const { stdout } = await run(
      join(ROOT, 'node_modules/.bin/redocly'),
      ['lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format=json'],
      {
        cwd: ROOT,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 16 * 1024 * 1024,
      },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    // redocly.yaml turns operation-4xx-response off for the health check's sake; every other operation keeps it.
    const without4xx = operations()
      .filter(({ operation }) => !Object.keys(operation.responses).some((status) => /^4\d\d$/.test(status)))
      .map(({ key }) => key);
    expect(without4xx).toEqual([...WITHOUT_CLIENT_ERRORS]);
  });

  it('names every operation with a unique camelCase operationId, and keeps the names clients already use', () => {
    const ids = operations().map(({ key, operation }) => [key, operation.operationId] as const);
    for (const [key, id] of ids) expect(id, key).toMatch(/^[a-z]+(?:[A-Z][a-z]*)+$/);
    expect(new Set(ids.map(([, id]) => id)).size).toBe(ids.length);
    expect(Object.fromEntries(ids)).toMatchObject(STABLE_OPERATION_IDS);
  });
});
