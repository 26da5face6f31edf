import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { IMPORTED_TABLES, POSTGRES_ONLY_TABLES, SQLITE_ONLY_TABLES } from '../../src/cluster-import-tables.js';
import { openDatabase } from '../../src/db/database.js';
import { openStateDatabase } from '../../src/db/state-db.js';
import * as tables from '../../src/schema.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import { lockDataDir } from '../../src/shared/data-dir-lock.js';
import { createSecretBox } from '../../src/shared/secret-box.js';
import { buildOnce, daemonApi, runCliAsync, startDaemonProcess } from '../support/daemon-process.js';
import { createTestDatabase } from '../support/postgres.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

const HOUR = 3_600_000;
/** A daemon that starts no work of its own: what it answers is what its database holds. */
const QUIET = {
  SITEWARDEN_SCHEDULED_UPTIME_PROBES: 'off',
  SITEWARDEN_SCHEDULED_BACKUPS: 'off',
  SITEWARDEN_SCHEDULED_AUDITS: 'off',
};
const DAY = 24 * HOUR;

/**
 * `sitewarden cluster import` (issue 34, docs/cluster.md "Moving a single machine into a cluster"): a data directory
 * made by the real services, with a row in every table, moved into a fresh PostgreSQL database by the real command;
 * verified by the command, read back through the cluster's repositories and by a daemon started on the cluster, which
 * answers as the single machine did. And the refusals: a database holding rows, another key, a daemon on the data
 * directory, a copy that differs.
 */
describe('sitewarden cluster import', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-import-'));
  const key = randomBytes(32);
  const databases: Array<{ drop(): Promise<void> }> = [];
  let token: string;
  let userPassword: string;
  let siteId: string;
  let singleMachine: { sites: unknown; fleet: unknown };

  async function freshDatabase(label: string): Promise<string> {
    const database = await createTestDatabase(inject('postgresUrl'), label);
    databases.push(database);
    return database.url;
  }
  const importInto = (url: string, env: Record<string, string> = {}) =>
    runCliAsync(['cluster', 'import', '--from', dataDir], {
      SITEWARDEN_DATABASE_URL: url,
      SITEWARDEN_SECRET_KEY: key.toString('base64'),
      SITEWARDEN_DATA_DIR: join(dataDir, 'unused'),
      SITEWARDEN_BLOB_TYPE: 'directory',
      SITEWARDEN_BLOB_PATH: join(dataDir, 'unused', 'blobs'),
      ...env,
    });
  async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<T>(text)).rows;
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    buildOnce();
    const app = createTestApp({ databasePath: join(dataDir, 'sitewarden.db'), secretKey: key });
    try {
      ({ siteId, userPassword } = await fillEveryTable(app));
      token = app.writeToken;
    } finally {
      await app.close();
    }
    // What the single machine's daemon answers, before the move.
    const daemon = await startDaemonProcess({
      SITEWARDEN_DATA_DIR: dataDir,
      SITEWARDEN_SECRET_KEY: key.toString('base64'),
      ...QUIET,
    });
    try {
      const call = daemonApi(() => daemon.port, token);
      singleMachine = {
        sites: (await call('GET', '/api/sites')).json,
        fleet: (await call('GET', '/api/fleet/updates')).json,
      };
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
  }, 90_000);
  afterAll(async () => {
    await Promise.all(databases.map((database) => database.drop()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('places every table of both dialects: copied, or named with why it is not', async () => {
    const sqlite = openDatabase(':memory:');
    const sqliteTables = (
      sqlite.sqlite.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]
    ).map((row) => row.name);
    sqlite.close();
    const url = await freshDatabase('import-tables');
    await (await openStateDatabase({ url, sqlitePath: '' })).close();
    const postgresTables = (
      await query<{ tablename: string }>(url, `select tablename from pg_tables where schemaname = 'public'`)
    ).map((row) => row.tablename);

    const copied = IMPORTED_TABLES.map((pair) => pair.name);
    expect(sqliteTables.sort()).toEqual([...copied, ...Object.keys(SQLITE_ONLY_TABLES)].sort());
    expect(postgresTables.sort()).toEqual([...copied, ...Object.keys(POSTGRES_ONLY_TABLES)].sort());
  });

  it('finds a row in every table it copies, so each one’s copy is tested', () => {
    const database = openDatabase(join(dataDir, 'sitewarden.db'), { migrate: false });
    const empty = IMPORTED_TABLES.map((pair) => pair.name).filter(
      (name) => !database.sqlite.prepare(`select 1 from "${name}" limit 1`).get(),
    );
    database.close();
    expect(empty).toEqual([]);
  });

  it('refuses a key other than the single machine’s, a data directory in use, and writes nothing', async () => {
    const url = await freshDatabase('import-refusals');
    const otherKey = await importInto(url, { SITEWARDEN_SECRET_KEY: randomBytes(32).toString('base64') });
    expect(otherKey.status).toBe(1);
    expect(otherKey.stderr).toContain('SITEWARDEN_SECRET_KEY does not open a site’s application password');

    const lock = lockDataDir(dataDir);
    try {
      const inUse = await importInto(url);
      expect(inUse.status).toBe(1);
      expect(inUse.stderr).toMatch(/is in use by another sitewarden process .*stop it first/);
    } finally {
      lock.release();
    }
    // Refused before the cluster's database was opened: not even migrated.
    expect(await query(url, `select 1 from pg_tables where tablename = 'sites'`)).toEqual([]);
  });

  it('rolls everything back when a table’s copy differs from the source', async () => {
    const url = await freshDatabase('import-mismatch');
    await (await openStateDatabase({ url, sqlitePath: '' })).close();
    // A rule rewrites what is written (the import's `disable trigger` does not reach rules): the copy differs.
    await query(
      url,
      `create rule tamper as on insert to uptime_rollup_marks do also update uptime_rollup_marks set until = until + 1`,
    );
    const result = await importInto(url);
    expect(result.status, result.stderr).toBe(1);
    expect(result.stdout, result.stderr).toMatch(
      /^uptime_rollup_marks +(\d+) +[0-9a-f]{12} +NO: cluster has \1 rows, digest [0-9a-f]{12}$/m,
    );
    expect(result.stderr).toContain('the copy of uptime_rollup_marks differs from the source: nothing was imported');
    expect(await query(url, 'select id from sites')).toEqual([]);
  });

  it('moves the database, verified, into a daemon that answers as the single machine did', async () => {
    const url = await freshDatabase('import');
    const result = await importInto(url);
    expect(result.status, result.stderr).toBe(0);
    for (const pair of IMPORTED_TABLES)
      expect(result.stdout).toMatch(new RegExp(`^${pair.name} +[1-9]\\d* +[0-9a-f]{12} +yes$`, 'm'));
    expect(result.stdout).toMatch(/^moved: the database, \d+ tables, \d+ rows, each verified$/m);
    // Its one backup row names no manifest (a row, not a backup taken): no blob to move, and nothing left.
    for (const what of ['backups', 'audit reports', 'screenshots'])
      expect(result.stdout).toContain(`moved: ${what}, 0\n`);
    expect(result.stdout).not.toContain('not moved');

    // The cluster's repositories read what was copied: the credentials open with the key.
    const state = await openStateDatabase({ url, sqlitePath: '' });
    try {
      const site = await createSitesRepository(state).findById(siteId);
      expect(createSecretBox(key).open(site!.credentialSealed!)).toBe('xxxx xxxx xxxx xxxx xxxx xxxx');
    } finally {
      await state.close();
    }
    // Identities past the ids copied: the next probe gets a new one.
    const [probe] = await query<{ id: string }>(
      url,
      `insert into uptime_probes (site_id, at, up) values ('${siteId}', 1, true) returning id::text`,
    );
    expect(Number(probe!.id)).toBeGreaterThan(3);

    // Again into the same database: refused, it holds rows now.
    const again = await importInto(url);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain(
      `the cluster’s database already holds rows (sites, site_tags, api_tokens, ${IMPORTED_TABLES.length - 3} more tables)`,
    );

    const daemonDir = mkdtempSync(join(tmpdir(), 'sitewarden-import-daemon-'));
    const daemon = await startDaemonProcess({
      SITEWARDEN_DATA_DIR: daemonDir,
      SITEWARDEN_DATABASE_URL: url,
      SITEWARDEN_SECRET_KEY: key.toString('base64'),
      // The cluster's blob store: a directory of its own (the sites and fleet answer without blobs).
      SITEWARDEN_BLOB_TYPE: 'directory',
      SITEWARDEN_BLOB_PATH: join(daemonDir, 'blobs'),
      ...QUIET,
    });
    try {
      const call = daemonApi(() => daemon.port, token);
      expect((await call('GET', '/api/sites')).json).toEqual(singleMachine.sites);
      expect((await call('GET', '/api/fleet/updates')).json).toEqual(singleMachine.fleet);
      const signedIn = await fetch(`http://127.0.0.1:${daemon.port}/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: 'ines', password: userPassword }).toString(),
        redirect: 'manual',
      });
      expect(signedIn.status, daemon.logs().slice(-2_000)).toBe(303);
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
      rmSync(daemonDir, { recursive: true, force: true });
    }
  }, 120_000);
});

/**
 * A data directory as a daemon that ran a while leaves it: sites with tags, users with sessions and two-factor,
 * tokens, webhooks with deliveries, jobs, inventories (and the fleet's totals their triggers keep), uptime probes,
 * roll-ups and downtime, audits, backups and restores, settings, policies with runs and holds, safe updates, the
 * update history, the audit log of the API's writes. Through the API where it has a door; the rows a daemon's work
 * writes (a sync, a probe, a backup) straight into its tables.
 */
async function fillEveryTable(app: TestApp): Promise<{ siteId: string; userPassword: string }> {
  const now = app.clock.now();
  const ms = now.getTime();
  const db = app.database.db;
  // Synced a moment ago: neither daemon syncs them again as it starts.
  const synced = { lastSyncedAt: now, lastSyncAttemptAt: now };
  const siteId = insertConnectedSite(app, { name: 'Größe Café', tags: ['client-a', 'woo'], ...synced });
  const second = insertConnectedSite(app, { name: 'Second', ...synced });

  const created = await app.call('POST', '/api/users', { json: { username: 'ines', role: 'manager' } });
  expect(created.status, created.text).toBe(201);
  const userPassword = created.json.password as string;
  expect((await app.call('PATCH', `/api/users/${created.json.id}`, { json: { scopeTags: ['client-a'] } })).status).toBe(
    200,
  );
  const signIn = await app.app.request('/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: 'ines', password: userPassword }).toString(),
  });
  expect(signIn.status).toBe(303);
  expect((await app.call('POST', '/api/tokens', { json: { name: 'ci', role: 'viewer' } })).status).toBe(201);
  const hook = await app.call('POST', '/api/webhooks', {
    json: { url: 'http://127.0.0.1:9/hook', events: ['site.connected'] },
  });
  expect(hook.status, hook.text).toBe(201);

  db.insert(tables.users)
    .values({
      id: 'user_totp',
      username: 'otto',
      passwordHash: 'scrypt$unused',
      role: 'viewer',
      createdAt: now,
      passwordChangedAt: now,
      totpSecret: app.services.secrets.seal('JBSWY3DPEHPK3PXP'),
      totpEnabledAt: now,
      totpLastStep: 123,
    })
    .run();
  db.insert(tables.recoveryCodes).values({ id: 'rc_1', userId: 'user_totp', codeHash: 'h', createdAt: now }).run();
  db.insert(tables.twoFactorSettings).values({ id: 1, required: true, changedAt: now, changedBy: 'token:x' }).run();
  db.insert(tables.webhookDeliveries)
    .values({
      id: 'wd_1',
      webhookId: hook.json.id,
      eventId: 'ev_1',
      event: 'site.connected',
      body: '{"event":"site.connected"}',
      status: 'failed',
      createdAt: now,
    })
    .run();
  db.insert(tables.jobs)
    .values([
      { id: 'bk_1', kind: 'backup', siteId, state: 'succeeded', params: '{"b":1,"a":[1,2]}', createdAt: now },
      { id: 'job_q', kind: 'audit', siteId: second, state: 'queued', progress: '{ "done": 0 }', createdAt: now },
    ])
    .run();

  const plugins = JSON.stringify([{ slug: 'akismet', version: '5.0' }]);
  db.insert(tables.siteInventories).values({ siteId, pluginsJson: plugins, themesJson: '[]', syncedAt: now }).run();
  db.insert(tables.inventoryItems)
    .values([
      { siteId, type: 'plugin', slug: 'akismet', name: 'Akismet', version: '5.0', updateVersion: '5.1', active: true },
      { siteId: second, type: 'plugin', slug: 'akismet', name: 'Akismet', version: '5.1', active: false },
      { siteId, type: 'theme', slug: 'twentyone', name: 'Twenty One', version: '1.0', active: true },
    ])
    .run();
  db.insert(tables.updateOffers)
    .values({ siteId, type: 'plugin', slug: 'akismet', version: '5.1', firstSeenAt: now })
    .run();
  db.insert(tables.siteEnvironments).values({ siteId, syncedAt: now }).run();

  const hour = ms - (ms % HOUR);
  db.insert(tables.uptimeMonitors)
    .values({ siteId, status: 'up', statusSince: ms - DAY, updatedAt: ms, paused: false })
    .run();
  db.insert(tables.uptimeProbes)
    .values([1, 2, 3].map((n) => ({ siteId, at: ms - n * 1_000, up: n !== 2, httpStatus: 200, responseMs: 100 + n })))
    .run();
  for (const bucket of [hour - HOUR, hour - 2 * HOUR])
    db.insert(tables.uptimeHourly)
      .values({
        siteId,
        bucket,
        up: 59,
        down: 1,
        responseSum: 6_007,
        responseCount: 60,
        responseMin: 80,
        responseMax: 130,
      })
      .run();
  db.insert(tables.uptimeDaily)
    .values({
      siteId,
      bucket: hour - (hour % DAY) - DAY,
      up: 1_439,
      down: 1,
      responseSum: 144_000,
      responseCount: 1_440,
    })
    .run();
  db.insert(tables.downtimeEvents)
    .values({ siteId, startedAt: ms - 2_000, endedAt: ms - 1_000, cause: 'timeout' })
    .run();
  db.insert(tables.uptimeRollupMarks).values({ name: 'hourly', until: hour }).run();

  db.insert(tables.performanceAudits)
    .values({
      id: 'aud_1',
      siteId,
      url: 'http://127.0.0.1:1/',
      formFactor: 'mobile',
      trigger: 'scheduled',
      runs: 1,
      status: 'completed',
      queuedAt: now,
      finishedAt: now,
      scorePerformance: 0.87,
    })
    .run();
  const settings = await app.call('PATCH', `/api/sites/${siteId}`, {
    json: { performance: { intervalHours: 48 }, backups: { intervalHours: 12 }, adminLogin: { enabled: false } },
  });
  expect(settings.status, settings.text).toBe(200);
  db.insert(tables.backupTagRetention).values({ tag: 'woo', keepLast: 9, updatedAt: now }).run();
  db.insert(tables.backups)
    .values({ id: 'bk_1', siteId, kind: 'scheduled', status: 'completed', createdAt: now, finishedAt: now })
    .run();
  db.insert(tables.restores)
    .values({ id: 'rs_1', siteId, backupId: 'bk_1', status: 'completed', createdAt: now })
    .run();
  db.insert(tables.removedSites)
    .values({ siteId: 'site_gone', removedAt: now, keepUntil: new Date(ms + 30 * DAY) })
    .run();

  db.insert(tables.updateHistory)
    .values({ id: 'uh_1', siteId, type: 'plugin', startedAt: now, triggerKind: 'request', result: 'succeeded' })
    .run();
  const policy = await app.call('POST', '/api/update-policies', {
    json: { name: 'Nightly', siteId, window: { days: ['mon'], start: '02:00', end: '04:00' } },
  });
  expect(policy.status, policy.text).toBe(201);
  db.insert(tables.updatePolicyRuns)
    .values({
      policyId: policy.json.id,
      siteId,
      windowStart: now,
      windowEnd: new Date(ms + HOUR),
      startedAt: now,
      targets: 2,
    })
    .run();
  db.insert(tables.updateHolds)
    .values({
      id: 'hold_1',
      siteId,
      itemType: 'plugin',
      slug: 'akismet',
      version: '5.1',
      outcome: 'rolled-back',
      heldAt: now,
    })
    .run();
  db.insert(tables.safeUpdates)
    .values({
      id: 'su_1',
      siteId,
      itemType: 'plugin',
      slug: 'akismet',
      status: 'kept',
      phase: 'done',
      policy: '{}',
      createdAt: now,
    })
    .run();
  db.insert(tables.rollbackSecrets)
    .values({ siteId, secretSealed: app.services.secrets.seal('rollback'), provisionedAt: now })
    .run();
  return { siteId, userPassword };
}
