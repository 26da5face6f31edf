import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { RoleNeedsClusterError, startDaemon, type RunningDaemon } from '../src/main.js';
import type { Services } from '../src/services.js';
import { createShutdownRegistry } from '../src/shared/shutdown.js';
import {
  heldJobKindsOf,
  parseProcessRole,
  selectWork,
  startWork,
  workRegistry,
  type ProcessRole,
} from '../src/work-registry.js';
import { createTestApp } from './support/test-app.js';

const silent = pino({ level: 'silent' });
const switchesOn = { uptimeProbes: true, audits: true, backups: true };

/** Services that record what the registry's rows call on them, in order. */
function recordingServices() {
  const calls: string[] = [];
  const stopped: string[] = [];
  const call =
    <T>(name: string, answer?: T) =>
    () => {
      calls.push(name);
      return answer;
    };
  const stop =
    <T>(name: string, answer?: T) =>
    () => {
      stopped.push(name);
      return answer;
    };
  const services = {
    http: { close: stop('http.close') },
    webhookDispatcher: {
      start: call('webhookDispatcher.start'),
      stop: stop('webhookDispatcher.stop'),
      tick: () => undefined,
      prune: () => undefined,
    },
    tokens: { ensureBootstrapToken: call('tokens.ensureBootstrapToken') },
    users: { ensureBootstrapAdmin: call('users.ensureBootstrapAdmin', Promise.resolve()), pruneSessions: () => 0 },
    siteQueue: { drain: stop('siteQueue.drain', Promise.resolve(true)) },
    sites: { expireAuthorizations: () => undefined },
    sync: { enqueueDue: () => undefined },
    uptime: {
      start: call('uptime.start'),
      stop: stop('uptime.stop'),
      maintain: async () => undefined,
      tick: () => undefined,
    },
    performance: {
      recover: call('performance.recover'),
      cleanupReports: call('performance.cleanupReports', Promise.resolve()),
      stop: stop('performance.stop'),
      enqueueDue: async () => undefined,
    },
    backups: {
      recoverInterrupted: call('backups.recoverInterrupted', Promise.resolve()),
      stop: stop('backups.stop', Promise.resolve(true)),
      enqueueDue: async () => undefined,
      targets: { names: ['offsite'], requestPrune: () => undefined },
    },
    bulkUpdates: { recover: call('bulkUpdates.recover'), stop: stop('bulkUpdates.stop', Promise.resolve(true)) },
    fleetActions: { recover: call('fleetActions.recover'), stop: stop('fleetActions.stop', Promise.resolve(true)) },
    safeUpdates: { recover: call('safeUpdates.recover'), stop: stop('safeUpdates.stop', Promise.resolve(true)) },
    updatePolicies: { tick: async () => undefined },
    auditLog: { prune: () => 0 },
  };
  return { services: services as unknown as Services, calls, stopped };
}

/** Builds a role's work as main.ts does, on recording services, a recording scheduler and a real shutdown registry. */
async function compose(role: ProcessRole) {
  const { services, calls, stopped } = recordingServices();
  const ticks: string[] = [];
  const steps: string[] = [];
  const registry = createShutdownRegistry({ logger: silent });
  await startWork({
    role,
    work: {
      services,
      config: { dataDir: '/nonexistent', shutdownGraceMs: 1_000, scheduled: switchesOn },
      logger: silent,
      graceLeft: () => 1_000,
    },
    scheduler: { every: (name) => void ticks.push(name) },
    shutdown: {
      register: (name, close) => {
        steps.push(name);
        registry.register(name, close);
      },
    },
  });
  await registry.shutdown();
  return { recoveries: calls, ticks, steps, stopped, heldJobKinds: heldJobKindsOf(role) };
}

const updatesJobKinds = ['bulk-update', 'site-update', 'safe-site-update', 'fleet-action', 'safe-update'];
const backupsJobKinds = ['backup', 'restore', 'backup-verify', 'backup-repair', 'target-prune'];

describe('the work registry', () => {
  it('starts, for `all`, everything in the order main.ts always started it, and stops it in reverse', async () => {
    const all = await compose({ role: 'all' });
    expect(all.recoveries).toEqual([
      'webhookDispatcher.start',
      'tokens.ensureBootstrapToken',
      'users.ensureBootstrapAdmin',
      'uptime.start',
      'performance.recover',
      'performance.cleanupReports',
      'backups.recoverInterrupted',
      'bulkUpdates.recover',
      'fleetActions.recover',
      'safeUpdates.recover',
    ]);
    // The shutdown steps between `database` and `scheduler` (main.ts's own), as registered.
    expect(all.steps).toEqual([
      'site http',
      'webhooks',
      'site tasks',
      'uptime monitor',
      'performance audits',
      'backups',
      'bulk updates',
      'fleet actions',
      'safe updates',
    ]);
    expect(all.stopped).toEqual([
      'safeUpdates.stop',
      'fleetActions.stop',
      'bulkUpdates.stop',
      'backups.stop',
      'performance.stop',
      'uptime.stop',
      'siteQueue.drain',
      'webhookDispatcher.stop',
      'http.close',
    ]);
    expect(all.ticks).toEqual([
      'site-sync',
      'uptime-maintenance',
      'performance-reports',
      'uptime-probes',
      'performance-audits',
      'backups',
      'update-policies',
      'audit-log-retention',
      'offsite-prune',
      'webhook-retries',
      'webhook-retention',
      'dashboard-sessions',
    ]);
    expect(all.heldJobKinds).toEqual([]);
  });

  it('starts, for `api`, no recovery, tick or job pool of the worker kinds', async () => {
    const api = await compose({ role: 'api' });
    expect(api.recoveries).toEqual([
      'webhookDispatcher.start',
      'tokens.ensureBootstrapToken',
      'users.ensureBootstrapAdmin',
    ]);
    expect(api.steps).toEqual(['site http', 'webhooks', 'site tasks']);
    expect(api.ticks).toEqual(['audit-log-retention', 'webhook-retries', 'webhook-retention', 'dashboard-sessions']);
    expect(api.heldJobKinds.sort()).toEqual(['audit', ...backupsJobKinds, ...updatesJobKinds].sort());
  });

  it('starts, for `worker --kinds backups`, the backups’ recovery, ticks and pools only', async () => {
    const worker = await compose({ role: 'worker', kinds: ['backups'] });
    expect(worker.recoveries).toEqual(['webhookDispatcher.start', 'backups.recoverInterrupted']);
    expect(worker.steps).toEqual(['site http', 'webhooks', 'site tasks', 'backups']);
    expect(worker.stopped).toEqual(['backups.stop', 'siteQueue.drain', 'webhookDispatcher.stop', 'http.close']);
    expect(worker.ticks).toEqual(['backups', 'offsite-prune']);
    expect(worker.heldJobKinds.sort()).toEqual(['audit', ...updatesJobKinds].sort());
  });

  it('starts, for `worker --kinds uptime,audits`, the monitor and the audits', async () => {
    const worker = await compose({ role: 'worker', kinds: ['uptime', 'audits'] });
    expect(worker.recoveries).toEqual([
      'webhookDispatcher.start',
      'uptime.start',
      'performance.recover',
      'performance.cleanupReports',
    ]);
    expect(worker.steps).toEqual(['site http', 'webhooks', 'site tasks', 'uptime monitor', 'performance audits']);
    expect(worker.ticks).toEqual(['uptime-maintenance', 'performance-reports', 'uptime-probes', 'performance-audits']);
    expect(worker.heldJobKinds.sort()).toEqual([...backupsJobKinds, ...updatesJobKinds].sort());
  });

  it('gives the sync tick and the update policies to `worker --kinds updates`', () => {
    expect(selectWork({ role: 'worker', kinds: ['updates'] }).map((entry) => entry.name)).toEqual([
      'site http',
      'webhooks',
      'site tasks',
      'site sync',
      'bulk updates',
      'fleet actions',
      'safe updates',
      'update policies',
    ]);
  });

  it('gives every persisted job kind the daemon registers to exactly one row', () => {
    const t = createTestApp();
    try {
      const owned = workRegistry.flatMap((entry) => entry.jobKinds ?? []);
      expect(owned.sort()).toEqual(t.services.jobs.kindNames().sort());
      expect(new Set(owned).size).toBe(owned.length);
    } finally {
      void t.close();
    }
  });
});

describe('--role and --kinds', () => {
  it('reads the roles and kinds', () => {
    expect(parseProcessRole(undefined, undefined)).toEqual({ role: 'all' });
    expect(parseProcessRole('api', undefined)).toEqual({ role: 'api' });
    expect(parseProcessRole('worker', undefined)).toEqual({
      role: 'worker',
      kinds: ['uptime', 'audits', 'backups', 'updates'],
    });
    expect(parseProcessRole('worker', 'uptime,audits,uptime')).toEqual({ role: 'worker', kinds: ['uptime', 'audits'] });
  });

  it('names the flag of a bad value', () => {
    expect(parseProcessRole('boss', undefined)).toEqual({
      error: '--role must be one of all, api, worker (not "boss")',
    });
    expect(parseProcessRole('worker', 'backups,mail')).toEqual({
      error: '--kinds takes uptime, audits, backups, updates (not "mail")',
    });
    expect(parseProcessRole(undefined, 'backups')).toEqual({ error: '--kinds goes only with --role worker' });
    expect(parseProcessRole('api', 'backups')).toEqual({ error: '--kinds goes only with --role worker' });
    expect(parseProcessRole('worker', '')).toEqual({
      error: '--kinds takes uptime, audits, backups, updates (not "")',
    });
  });
});

describe('a daemon started in a role', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  function freshDataDir(): string {
    const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-roles-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    return dataDir;
  }
  const configFor = (dataDir: string) =>
    loadConfig({ SITEWARDEN_DATA_DIR: dataDir, SITEWARDEN_PORT: '0', SITEWARDEN_HOST: '127.0.0.1' });

  async function started(role: ProcessRole): Promise<RunningDaemon> {
    const daemon = await startDaemon(configFor(freshDataDir()), silent, { role, allowRoleWithoutCluster: true });
    cleanups.unshift(() => daemon.shutdown());
    return daemon;
  }

  it('refuses `api` and `worker` on a single data directory, before touching it', async () => {
    for (const role of [{ role: 'api' }, { role: 'worker', kinds: ['backups'] }] as const) {
      const dataDir = freshDataDir();
      await expect(startDaemon(configFor(dataDir), silent, { role })).rejects.toThrow(RoleNeedsClusterError);
      await expect(startDaemon(configFor(dataDir), silent, { role })).rejects.toThrow(
        `--role ${role.role} needs cluster mode (SITEWARDEN_DATABASE_URL`,
      );
      expect(readdirSync(dataDir)).toEqual([]);
    }
  });

  it('serves, as a worker, only /healthz and /readyz', async () => {
    const daemon = await started({ role: 'worker', kinds: ['backups'] });
    const base = `http://127.0.0.1:${daemon.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready' });
    expect((await fetch(`${base}/api/sites`)).status).toBe(404);
    expect((await fetch(`${base}/`)).status).toBe(404);
  }, 60_000);

  it('serves, as the API, the API and the dashboard', async () => {
    const daemon = await started({ role: 'api' });
    const base = `http://127.0.0.1:${daemon.port}`;
    const sites = await fetch(`${base}/api/sites`);
    expect(sites.status).toBe(401);
    expect(sites.headers.get('content-type')).toBe('application/problem+json');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  }, 60_000);
});
