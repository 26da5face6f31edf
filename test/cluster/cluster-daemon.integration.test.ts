import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  adminApi,
  connectSite,
  daemonApi,
  type DaemonProcess,
  queueBackup,
  runCli,
  storingFiles,
  useDaemonSite,
  waitForBackup,
} from '../support/daemon-process.js';
import { shardOf } from '../../src/uptime/uptime-leases.js';
import { useClusterDaemons } from '../support/cluster-daemons.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

/** The dashboard's live activity stream (`GET /events`) of the process on `port`, signed in as its first admin. */
async function liveActivity(dataDir: string, port: number): Promise<{ text(): string; close(): void }> {
  const password = /password: (\S+)/.exec(readFileSync(join(dataDir, 'admin-password'), 'utf8'))![1]!;
  const signedIn = await fetch(`http://127.0.0.1:${port}/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: 'admin', password }).toString(),
    redirect: 'manual',
  });
  const cookie = /sw_session=[^;]+/.exec(signedIn.headers.get('set-cookie') ?? '')?.[0];
  if (!cookie) throw new Error(`signing in answered ${signedIn.status}`);
  const controller = new AbortController();
  const response = await fetch(`http://127.0.0.1:${port}/events`, { headers: { cookie }, signal: controller.signal });
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  let received = '';
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of response.body!) received += decoder.decode(chunk as Uint8Array, { stream: true });
  })().catch(() => undefined);
  return { text: () => received, close: () => controller.abort() };
}

/**
 * Cluster mode (issue 34) with real processes on a real PostgreSQL: an API process and a backups worker, each with
 * its own data directory, sharing the database and the job queue. What the API is asked, the worker does; what the
 * worker did, the API answers, its live page shows, and a webhook hears of it once; a cancel asked of the API stops the
 * worker's run. Then two uptime workers share the site's probes, and one takes them over when the other is killed.
 */
describe('the daemon in cluster mode: an API process and a worker on PostgreSQL', () => {
  // One large upload the site sends slowly: a backup runs long enough to be cancelled in the middle.
  const bed = useDaemonSite('cluster', { lean: true, uploadMb: 16, slowRangeMs: 1_000 });
  const cluster = useClusterDaemons('cluster-daemon');
  const workerDir = cluster.dataDir('worker');
  const allDirs = [0, 1].map((n) => cluster.dataDir(`all-${n}`));
  // The operator commands' own data directory (each running process holds its own).
  const cliDir = cluster.dataDir('cli');
  const { env, start: started } = cluster;

  it('refuses to start without the shared secret key, naming why', () => {
    const keyless = runCli(['start', '--role', 'api'], { ...env(workerDir), SITEWARDEN_SECRET_KEY: '' });
    expect(keyless.status).toBe(1);
    expect(keyless.stderr).toContain('SITEWARDEN_SECRET_KEY: cluster mode (SITEWARDEN_DATABASE_URL) needs the key set');
  });

  it('takes a backup asked of the API in the worker, and answers how it ended from the API', async () => {
    const api = await started(bed.dataDir, ['--role', 'api']);
    const worker = await started(workerDir, ['--role', 'worker', '--kinds', 'backups']);
    const call = adminApi(bed.dataDir, () => api.port);

    // A webhook made through the API: the worker delivers what it emits, once.
    const receiver = await startWebhookReceiver();
    const hook = await call('POST', '/api/webhooks', { url: receiver.url, events: ['backup.completed'] });
    expect(hook.status, JSON.stringify(hook.json)).toBe(201);

    const siteId = await connectSite(call, bed.site);
    // The dashboard's live activity, signed in to the API process: it shows what the worker does.
    const live = await liveActivity(bed.dataDir, api.port);
    const backupId = await queueBackup(call, siteId);
    let backup = (await call('GET', `/api/sites/${siteId}/backups/${backupId}`)).json;
    for (let poll = 0; poll < 1_500 && backup.status !== 'completed' && backup.status !== 'failed'; poll++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      backup = (await call('GET', `/api/sites/${siteId}/backups/${backupId}`)).json;
    }
    expect(backup, worker.logs()).toMatchObject({ status: 'completed' });
    expect((await call('GET', `/api/jobs/${backupId}`)).json).toMatchObject({ state: 'succeeded', kind: 'backup' });

    // The worker ran it; the API process only asked.
    const ranIn = (daemon: DaemonProcess) =>
      new RegExp(`"event":"backup.completed"[^\\n]*"backupId":"${backupId}"`).test(daemon.logs());
    expect(ranIn(worker)).toBe(true);
    expect(ranIn(api)).toBe(false);
    // The event's way: the worker's fan-out, the API process's bus, then the stream (a busy machine takes its time).
    const shown = new RegExp(`"event":"backup.completed"[^\\n]*${backupId}`);
    for (let poll = 0; poll < 300 && !shown.test(live.text()); poll++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const eventLines = live
      .text()
      .split('\n')
      .filter((line) => line.startsWith('data: {'));
    expect(eventLines.join('\n'), `${api.logs().slice(-3_000)}\n---\n${worker.logs().slice(-3_000)}`).toMatch(shown);
    live.close();
    const deliveries = () => receiver.received.filter((request) => request.body.includes(backupId));
    for (let poll = 0; poll < 100 && deliveries().length === 0; poll++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    // A moment more: a second process delivering it too would have done so by now.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(deliveries()).toHaveLength(1);
    expect(JSON.parse(deliveries()[0]!.body)).toMatchObject({ event: 'backup.completed' });
    await receiver.close();

    // Both are ready: each reads the shared database.
    for (const daemon of [api, worker]) {
      const ready = await fetch(`http://127.0.0.1:${daemon.port}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ready' });
    }

    // Each process's ticks ran where their minute was claimed: the API's audit retention, the worker's backups.
    const client = new pg.Client({ connectionString: cluster.databaseUrl() });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>('select distinct name from scheduled_tick_claims');
      expect(rows.map((row) => row.name)).toEqual(expect.arrayContaining(['audit-log-retention', 'backups']));
    } finally {
      await client.end();
    }

    // A running backup cancelled through the API: the request reaches the worker running it, which stops it. The
    // upload changed first: the backup is incremental, and only a file it has not stored is sent (slowly).
    writeFileSync(join(bed.site.root, 'wp-content/uploads/2026/02/film.bin'), randomBytes(16 * 1024 * 1024));
    const cancelledId = await queueBackup(call, siteId);
    expect(await waitForBackup(call, siteId, cancelledId, storingFiles)).toBe(true);
    const asked = await call('POST', `/api/jobs/${cancelledId}/cancel`);
    expect(asked.status, JSON.stringify(asked.json)).toBe(202);
    let cancelled = (await call('GET', `/api/jobs/${cancelledId}`)).json;
    for (let poll = 0; poll < 200 && cancelled.state === 'running'; poll++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      cancelled = (await call('GET', `/api/jobs/${cancelledId}`)).json;
    }
    expect(cancelled, worker.logs()).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
    expect((await call('GET', `/api/sites/${siteId}/backups/${cancelledId}`)).json).toMatchObject({
      status: 'failed',
      reason: 'cancelled',
    });
    // Told by the worker that stopped it, with who asked (the API's token).
    expect(worker.logs()).toMatch(
      new RegExp(`"event":"job.cancelled"[^\\n]*"jobId":"${cancelledId}"[^\\n]*"requestedByKind":"token"`),
    );

    // Two uptime workers, a --role all process and an uptime worker, share the site's probes: one probe a slot,
    // whichever holds its shard, and the other takes the shard over when the holder is killed.
    const uptimeEnv = { SITEWARDEN_UPTIME_LEASE_SECONDS: '5', SITEWARDEN_UPTIME_INTERVAL_SECONDS: '10' };
    const uptimeWorkers = [
      await started(allDirs[0]!, ['--role', 'all'], uptimeEnv),
      await started(allDirs[1]!, ['--role', 'worker', '--kinds', 'uptime'], uptimeEnv),
    ];
    const viaAll = adminApi(bed.dataDir, () => uptimeWorkers[0]!.port);
    expect((await viaAll('GET', `/api/jobs/${backupId}`)).json).toMatchObject({ state: 'succeeded' });
    const logsOf = () => uptimeWorkers.map((daemon) => daemon.logs().slice(-2_000)).join('\n---\n');
    /** The site's uptime as the API process answers it (from the database), once it was probed after `after`. */
    async function probedAfter(after: number) {
      for (let poll = 0; poll < 300; poll++) {
        const uptime = (await call('GET', `/api/sites/${siteId}`)).json.status.uptime;
        if (uptime?.lastCheckedAt && Date.parse(uptime.lastCheckedAt) > after) return uptime;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`the site was not probed after ${new Date(after).toISOString()}:\n${logsOf()}`);
    }
    expect(await probedAfter(0)).toMatchObject({ status: 'up', paused: false });
    const pg2 = new pg.Client({ connectionString: cluster.databaseUrl() });
    await pg2.connect();
    try {
      const holderOf = async () =>
        (
          await pg2.query<{ holder: string }>(
            `select holder from uptime_shard_leases l join uptime_workers w on w.id = l.holder where l.shard = $1`,
            [shardOf(siteId)],
          )
        ).rows[0]?.holder;
      // A shard given back while the second worker takes its share has no holder for a moment: wait for one.
      let holder = await holderOf();
      for (let poll = 0; poll < 100 && holder === undefined; poll++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        holder = await holderOf();
      }
      const killed = uptimeWorkers.find((daemon) => holder?.includes(`:${daemon.child.pid}:`));
      expect(killed, `holder ${holder}`).toBeDefined();
      killed!.child.kill('SIGKILL');
      await killed!.exited;
      const killedAt = Date.now();
      // Within a lease, a renewal and an interval, the other worker probes it.
      await probedAfter(killedAt);
      expect(await holderOf()).not.toBe(holder);
      const { rows } = await pg2.query<{ at: string }>('select at from uptime_probes where site_id = $1 order by at', [
        siteId,
      ]);
      const times = rows.map((row) => Number(row.at));
      // Never two probes of one slot (the slots are 10 s apart; a shard taken over catches up once, late).
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!, logsOf()).toBeGreaterThan(1_000);
    } finally {
      await pg2.end();
    }

    // The operator commands act on the cluster's database: a token made there works on the API process.
    const made = runCli(['token', 'create', '--name', 'ops', '--role', 'manager'], env(cliDir));
    expect(made.status, made.stderr).toBe(0);
    const ops = daemonApi(() => api.port, made.stdout.trim());
    expect((await ops('GET', `/api/sites/${siteId}`)).status).toBe(200);
    expect(runCli(['users', 'create', 'olga', '--role', 'viewer'], env(cliDir)).status).toBe(0);
    expect(runCli(['users', 'list'], env(cliDir)).stdout).toMatch(/\tolga\tviewer\t/);
  }, 180_000);
});
