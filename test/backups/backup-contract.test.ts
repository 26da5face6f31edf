import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_BACKUPS_CONFIG } from '../../src/backups/backups.config.js';
import { createBackupLimits, DEFAULT_BACKUP_LIMITS, type BackupLimitsConfig } from '../../src/backups/backup-limits.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { sha256, startFakeWordPress, type FakeWordPress } from '../support/fake-wordpress/index.js';
import { verifyJob } from '../support/backup-site.js';

/**
 * A site's listing is a contract: the backup keeps only bytes that are what the site declared,
 * within a deadline and a byte budget derived from the listing, and a site gets no content it
 * did not prove it has. Against a fake WordPress switched into each misbehaviour.
 */
let dataDir: string;
let t: TestApp;
const sites: FakeWordPress[] = [];

function useApp(limits: Partial<BackupLimitsConfig> = {}) {
  t = createTestApp({
    config: {
      dataDir,
      backups: { ...DEFAULT_BACKUPS_CONFIG, limits: { ...DEFAULT_BACKUPS_CONFIG.limits, ...limits } },
    },
  });
}

async function fakeSite(files?: Record<string, Buffer | string>) {
  const site = await startFakeWordPress({ files });
  sites.push(site);
  const connected = await t.call('POST', '/api/sites', {
    json: { url: site.url, username: site.username, applicationPassword: site.applicationPassword },
  });
  expect(connected.status, connected.text).toBe(201);
  return { site, siteId: connected.json.id as string };
}

async function backUp(siteId: string) {
  const queued = await t.call('POST', `/api/sites/${siteId}/backups`);
  expect(queued.status, queued.text).toBe(202);
  await t.services.backups.idle();
  return (await t.call('GET', `/api/sites/${siteId}/backups/${queued.json.id}`)).json;
}

async function downloaded(siteId: string, backupId: string): Promise<Buffer> {
  // A download is a manager's (a backup holds the site's secrets): the owner token, not the read one.
  const response = await t.app.request(`/api/sites/${siteId}/backups/${backupId}/download`, {
    headers: { authorization: `Bearer ${t.writeToken}` },
  });
  expect(response.status).toBe(200);
  return gunzipSync(Buffer.from(await response.arrayBuffer()));
}

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-contract-'));
  useApp();
});
afterEach(async () => {
  await t.services.backups.idle();
  await t.close();
  for (const site of sites.splice(0)) await site.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const BIG = 'wp-content/uploads/video.bin';
const bigContent = () => Buffer.alloc(3 * 1024 * 1024 + 17, 0x5a);

describe('the listing is a contract', () => {
  it('backs up an honest site completely, and the backup verifies', async () => {
    const { site, siteId } = await fakeSite();
    site.setFile(BIG, bigContent());
    const backup = await backUp(siteId);
    expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'completed', progress: { files: 4, filesDone: 4 } });
    expect((await verifyJob(t, `/api/sites/${siteId}/backups/${backup.id}/verify`)).json).toMatchObject({
      ok: true,
      problems: [],
    });
    expect((await downloaded(siteId, backup.id)).includes('hello from the fake site')).toBe(true);
  });

  it.each([
    [
      'an HTML error page with HTTP 200 in place of a small file',
      'wp-content/uploads/2026/hello.txt',
      { served: 'html' as const },
    ],
    [
      'other bytes of the declared size',
      'wp-content/uploads/2026/hello.txt',
      { served: Buffer.from('HELLO FROM THE FAKE SITE\n') },
    ],
    ['a size other than the declared one', 'wp-content/uploads/2026/hello.txt', { declared: { size: 3 } }],
    ['a hash other than the declared one, in ranges', BIG, { declared: { sha256: sha256('something else') } }],
    ['an HTML error page with HTTP 200 in place of a large file', BIG, { served: 'html' as const }],
  ])('fails the backup, naming the file, when the site sends %s', async (_case, path, misbehaviour) => {
    const { site, siteId } = await fakeSite();
    site.setFile(BIG, bigContent());
    Object.assign(site.files.get(path)!, misbehaviour);
    const backup = await backUp(siteId);
    expect(backup, JSON.stringify(backup)).toMatchObject({
      status: 'failed',
      reason: 'backup-content-mismatch',
      manifest: null,
    });
    expect(backup.error).toContain(path);
    // The file was asked again (re-declared and re-read) before the backup gave up.
    expect(site.requests.filter((route) => route === 'sitewarden/v1/backup/file').length).toBeGreaterThanOrEqual(2);
  });

  it('cuts off a range longer than asked and never stores it', async () => {
    const { site, siteId } = await fakeSite();
    site.setFile(BIG, bigContent());
    site.misbehaviour.rangeExtraBytes = 1024 * 1024;
    const backup = await backUp(siteId);
    expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'failed', reason: 'backup-content-mismatch' });
    expect(backup.error).toContain(BIG);
    expect(backup.bytes.stored).toBeLessThan(64 * 1024);
  });

  it('reads again a file that changed during the backup, as the site declares it now', async () => {
    const { site, siteId } = await fakeSite();
    let changed = false;
    site.override('sitewarden/v1/backup/bundle', () => {
      if (!changed) site.setFile('wp-content/uploads/2026/hello.txt', 'rewritten while the backup ran\n');
      changed = true;
      return false;
    });
    const backup = await backUp(siteId);
    expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'completed' });
    // Asked what the file is now (a second listing request) rather than keeping bytes nobody declared.
    expect(site.requests.filter((route) => route === 'sitewarden/v1/backup/files')).toHaveLength(2);
    const archive = await downloaded(siteId, backup.id);
    expect(archive.includes('rewritten while the backup ran')).toBe(true);
    expect((await verifyJob(t, `/api/sites/${siteId}/backups/${backup.id}/verify`)).json).toMatchObject({ ok: true });
  });

  it.each([
    ['a page with more entries than asked', 'oversized-page' as const],
    ['a cursor that does not advance', 'stuck-cursor' as const],
  ])('refuses a listing with %s', async (_case, listing) => {
    const { site, siteId } = await fakeSite();
    site.misbehaviour.listing = listing;
    const backup = await backUp(siteId);
    expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'failed', reason: 'backup-listing-invalid' });
  });
});

describe('bounded backups', () => {
  it('ends a never-ending listing at the backup’s deadline; the daemon carries on', async () => {
    await t.close();
    useApp({ deadlineBaseMinutes: 1.5 / 60 });
    const { site, siteId } = await fakeSite();
    site.misbehaviour.listing = 'endless';
    const started = Date.now();
    const backup = await backUp(siteId);
    expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'failed', reason: 'backup-deadline-exceeded' });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect((await t.call('GET', `/api/sites/${siteId}`)).status).toBe(200);
  });

  it('ends a backup whose site stalls mid-file at its deadline', async () => {
    await t.close();
    useApp({ deadlineBaseMinutes: 1.5 / 60, minThroughputKibPerSecond: 1024 * 1024 });
    const { site, siteId } = await fakeSite();
    site.setFile(BIG, bigContent());
    site.misbehaviour.stall = ['sitewarden/v1/backup/file'];
    const backup = await backUp(siteId);
    expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'failed', reason: 'backup-deadline-exceeded' });
  });

  it('derive the deadline and byte budget from the declared bytes, and `take` refuses bytes past the budget', () => {
    const limits = createBackupLimits({ ...DEFAULT_BACKUP_LIMITS, budgetFactor: 2, budgetSlackMb: 1 });
    try {
      limits.declare(10 * 1024 * 1024);
      expect(limits.budget.limit).toBe(21 * 1024 * 1024);
      limits.budget.take(21 * 1024 * 1024);
      expect(() => limits.budget.take(1)).toThrow(
        expect.objectContaining({ problem: expect.objectContaining({ name: 'backup-budget-exceeded' }) }),
      );
      expect(limits.deadlineProblem().detail).toMatch(/deadline of 3620 s/);
    } finally {
      limits.dispose();
    }
  });

  it('ends a backup whose site sends more bytes than its listing allows', async () => {
    await t.close();
    useApp({ budgetFactor: 1, budgetSlackMb: 0 });
    const { site, siteId } = await fakeSite();
    site.setFile(BIG, bigContent());
    // Wrong bytes of the right size: every re-read costs the whole file again.
    site.files.get(BIG)!.served = Buffer.alloc(bigContent().length, 0x41);
    const backup = await backUp(siteId);
    expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'failed', reason: 'backup-budget-exceeded' });
  });
});

describe('table rows count against the budget', () => {
  const oneRow = (bytes: number) =>
    `INSERT INTO \`wp_options\` (\`option_id\`,\`option_name\`) VALUES\n(1,X'${Buffer.alloc(bytes, 0x61).toString('hex')}');\n`;

  it('grows the budget by what the tables declare, so a database larger than the files backs up', async () => {
    await t.close();
    useApp({ budgetFactor: 2, budgetSlackMb: 0 });
    const { site, siteId } = await fakeSite();
    Object.assign(site.tables[0]!, { bytes: 40_000, sql: oneRow(30_000) });
    const backup = await backUp(siteId);
    expect(backup, JSON.stringify(backup)).toMatchObject({
      status: 'completed',
      progress: { tables: 1, tablesDone: 1 },
      rows: 1,
    });
  });

  it('ends a backup whose table sends more than its declared size allows', async () => {
    await t.close();
    useApp({ budgetFactor: 2, budgetSlackMb: 0 });
    const { site, siteId } = await fakeSite();
    Object.assign(site.tables[0]!, { bytes: 0, sql: oneRow(30_000) });
    const backup = await backUp(siteId);
    expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'failed', reason: 'backup-budget-exceeded' });
  });
});

describe('tables a site lies about', () => {
  const hex = (text: string) => Buffer.from(text).toString('hex');
  const cases: [string, (site: FakeWordPress) => void, string][] = [
    [
      'a CREATE TABLE carrying a second statement',
      (site) => (site.tables[0]!.create += ';\nDROP DATABASE wordpress'),
      'backup-table-invalid',
    ],
    [
      'a GRANT in place of a row batch',
      (site) => (site.tables[0]!.sql = "GRANT ALL ON *.* TO 'x'@'%';\n"),
      'backup-table-invalid',
    ],
    [
      'a row batch with a second statement',
      (site) =>
        (site.tables[0]!.sql = `INSERT INTO \`wp_options\` (\`option_id\`,\`option_name\`) VALUES\n(1,X'${hex('a')}');\nCREATE USER 'x'@'%';\n`),
      'backup-table-invalid',
    ],
    [
      'more rows than declared',
      (site) =>
        (site.tables[0]!.sql = `INSERT INTO \`wp_options\` (\`option_id\`,\`option_name\`) VALUES\n${Array.from({ length: 150 }, (_, i) => `(${i + 1},X'${hex('a')}')`).join(',\n')};\n`),
      'backup-table-invalid',
    ],
    [
      'rows of the wrong shape',
      (site) =>
        site.override(
          'sitewarden/v1/backup/rows',
          ({ res }) => (res.writeHead(200, { 'content-type': 'application/json' }).end('{"foo":1}'), true),
        ),
      'site-invalid-response',
    ],
  ];

  it.each(cases)(
    'fails the backup on %s, naming the table or route, and never writes it into a dump',
    async (_name, lie, reason) => {
      const { site, siteId } = await fakeSite();
      lie(site);
      const backup = await backUp(siteId);
      expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'failed', reason, manifest: null });
      expect(backup.error).toMatch(/wp_options|backup\/rows/);
      expect(site.requests.filter((route) => route.endsWith('backup/rows')).length).toBeLessThanOrEqual(2);
    },
  );
});

describe('a removed site', () => {
  it('takes its backup scratch store (the listing and proofs a failed backup kept for its retry) with it', async () => {
    const { site, siteId } = await fakeSite();
    site.setFile(BIG, bigContent());
    site.files.get(BIG)!.served = 'html';
    expect(await backUp(siteId)).toMatchObject({ status: 'failed', reason: 'backup-content-mismatch' });
    const scratch = join(dataDir, 'backups', 'sites', `${siteId}.sqlite`);
    expect(existsSync(scratch)).toBe(true);
    expect((await t.call('DELETE', `/api/sites/${siteId}`)).status).toBe(204);
    expect(existsSync(scratch)).toBe(false);
  });
});

describe('dedup per site', () => {
  const secret = 'site A’s customer list: alice@example.com, bob@example.com\n';
  const forgery = 'site B pretends to hold site A’s file, same length...........\n'.slice(0, Buffer.byteLength(secret));

  it('never gives a site content it did not send, even when it lists another site’s hash', async () => {
    const a = await fakeSite({ 'wp-content/uploads/customers.csv': secret });
    expect(await backUp(a.siteId)).toMatchObject({ status: 'completed' });

    // B declares A's size and hash, and sends other bytes: refused.
    const b = await fakeSite({ 'wp-content/uploads/stolen.csv': forgery });
    b.site.files.get('wp-content/uploads/stolen.csv')!.declared = {
      size: Buffer.byteLength(secret),
      sha256: sha256(secret),
    };
    const refused = await backUp(b.siteId);
    expect(refused, JSON.stringify(refused)).toMatchObject({ status: 'failed', reason: 'backup-content-mismatch' });

    // C declares A's hash and sends nothing at all (the file is gone when asked): C's backup holds none of A's bytes.
    const c = await fakeSite({ 'index.php': '<?php\n', 'wp-content/uploads/stolen.csv': forgery });
    c.site.files.get('wp-content/uploads/stolen.csv')!.declared = {
      size: Buffer.byteLength(secret),
      sha256: sha256(secret),
    };
    c.site.override('sitewarden/v1/backup/bundle', () => {
      c.site.files.delete('wp-content/uploads/stolen.csv');
      return false;
    });
    const backup = await backUp(c.siteId);
    expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'completed' });
    expect((await downloaded(c.siteId, backup.id)).includes('alice@example.com')).toBe(false);
  });
});
