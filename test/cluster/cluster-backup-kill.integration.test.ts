import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  adminApi,
  connectSite,
  type DaemonApi,
  queueBackup,
  runCli,
  storingFiles,
  useDaemonSite,
  waitForBackup,
} from '../support/daemon-process.js';
import { useClusterDaemons } from '../support/cluster-daemons.js';
import { waitFor } from '../support/wait.js';

/** Every file under `dir` (relative path → inode and modification time), `.tmp/` apart. */
function filesUnder(dir: string): Map<string, string> {
  if (!existsSync(dir)) return new Map();
  return new Map(
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name))
      .map((path) => [path.slice(dir.length + 1), statSync(path)] as const)
      .map(([path, stat]) => [path, `${stat.ino}:${stat.mtimeMs}`]),
  );
}

/**
 * Cluster mode (issue 34), the crash test with real processes: one API process and two backup workers on one
 * PostgreSQL database and one blob store (a shared directory), and a real WordPress site. The worker running a backup
 * is killed (SIGKILL) in its middle. PostgreSQL drops the dead worker's run lock with its connection, the other
 * worker's sweep gives the job to it within seconds (the backups pool's expiry is six hours), and that attempt settles
 * the backup as a restart does on one machine: the backup ends `failed`, `interrupted`, and is retried at once as a new
 * backup (`retryOf` naming it) that reuses what the killed one stored. That retry completes and verifies; no object the
 * killed worker stored is written again, and no snapshot is written for the interrupted backup.
 */
describe('a backup worker killed mid-backup in a cluster', () => {
  // One large upload sent slowly: the backup is caught in its middle, with files stored and the upload to come.
  const bed = useDaemonSite('cluster-kill', { lean: true, uploadMb: 16, slowRangeMs: 1_000 });
  const cluster = useClusterDaemons('cluster-kill', {
    SITEWARDEN_SCHEDULED_UPTIME_PROBES: 'off',
    SITEWARDEN_SCHEDULED_AUDITS: 'off',
  });
  const workerDirA = cluster.dataDir('worker-a');
  const workerDirB = cluster.dataDir('worker-b');
  const cliDir = cluster.dataDir('cli');
  const backupsDir = join(cluster.blobDir, 'backups');
  const { env, start: started } = cluster;

  /** The site's backups as the API answers them, newest first. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the backups as the API answers them
  const backupsOf = async (call: DaemonApi, siteId: string): Promise<any[]> =>
    (await call('GET', `/api/sites/${siteId}/backups`)).json.items;

  it('has the other worker retry it within seconds: the retry completes, verifies, and stores nothing twice', async () => {
    const api = await started(bed.dataDir, ['--role', 'api']);
    const workers = await Promise.all(
      [workerDirA, workerDirB].map((dir) => started(dir, ['--role', 'worker', '--kinds', 'backups'])),
    );
    const call = adminApi(bed.dataDir, () => api.port);
    const siteId = await connectSite(call, bed.site);
    const backupId = await queueBackup(call, siteId);
    expect(await waitForBackup(call, siteId, backupId, storingFiles)).toBe(true);

    // The worker running it keeps the site's file listing in its data directory (its scratch), the other has none.
    const running = workers.filter((_, index) =>
      existsSync(join([workerDirA, workerDirB][index]!, 'backups', 'sites', `${siteId}.sqlite`)),
    );
    expect(running).toHaveLength(1);
    const killed = running[0]!;
    const other = workers.find((worker) => worker !== killed)!;
    killed.child.kill('SIGKILL');
    await killed.exited;
    const killedAt = Date.now();
    // What the killed worker had stored under final names by then (its half-written ones are under `.tmp/`).
    const storedBefore = filesUnder(join(backupsDir, 'data'));
    expect(storedBefore.size).toBeGreaterThan(0);

    // The documented outcome: the backup ends interrupted, and the other worker retries it as a new backup at once.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the backups and job as the API answers them
    let retry: any, interrupted: { backup: any; job: any } | undefined;
    await waitFor(
      async () => {
        const backups = await backupsOf(call, siteId);
        // Seen before the retry completes: retention then removes it (and its job), a newer backup being good.
        const first = backups.find((backup) => backup.id === backupId);
        if (first?.status === 'failed')
          interrupted ??= { backup: first, job: (await call('GET', `/api/jobs/${backupId}`)).json };
        retry = backups.find((backup) => backup.retryOf === backupId);
        return retry?.status === 'completed' || retry?.status === 'failed';
      },
      60_000,
      () => `the retry to end\n${other.logs().slice(-4_000)}`,
      200,
    );
    const endedInMs = Date.now() - killedAt;
    expect(retry).toMatchObject({ status: 'completed', reason: null, retryOf: backupId });
    // Well under the backups pool's six-hour expiry: the sweep's seconds, the retry's run.
    expect(endedInMs).toBeLessThan(60_000);
    console.log(`the killed worker's backup was retried and completed ${endedInMs} ms after the kill`);

    // The job history: the interrupted backup and its job ended as a restart ends them, the retry's job succeeded.
    expect(interrupted?.backup).toMatchObject({ status: 'failed', reason: 'interrupted', manifest: null });
    expect(interrupted?.job).toMatchObject({ state: 'failed', reason: 'interrupted', attempts: 1 });
    expect((await call('GET', `/api/jobs/${retry.id}`)).json).toMatchObject({ state: 'succeeded', attempts: 1 });
    const logs = other.logs();
    // Swept by whichever live process swept first (every process that works the queue sweeps, the API's too).
    expect(`${api.logs()}\n${logs}`).toMatch(
      new RegExp(`"jobId":"${backupId}"[^\\n]*"msg":"a job whose worker is gone`),
    );
    expect(logs).toMatch(new RegExp(`"event":"job.interrupted"[^\\n]*"jobId":"${backupId}"[^\\n]*"action":"failed"`));
    expect(logs).toMatch(
      new RegExp(`"event":"backup.failed"[^\\n]*"backupId":"${backupId}"[^\\n]*"reason":"interrupted"`),
    );
    expect(logs).toMatch(
      new RegExp(`"event":"job.interrupted"[^\\n]*"jobId":"${backupId}"[^\\n]*"action":"retried"[^\\n]*"${retry.id}"`),
    );
    expect(logs).toMatch(new RegExp(`"event":"backup.completed"[^\\n]*"backupId":"${retry.id}"`));

    // It verifies, read from the cluster's database and blob store as any operator's command reads it.
    const verified = runCli(['backup', 'verify', retry.id], env(cliDir));
    expect(verified.stdout, verified.stderr).toMatch(/^ok: backup /);
    expect(verified.status).toBe(0);

    // Nothing stored twice: each object the killed worker stored is the same file, not written again; one snapshot
    // record, the retry's (none for the interrupted backup); no half-written file of the surviving worker left.
    const storedAfter = filesUnder(join(backupsDir, 'data'));
    for (const [path, identity] of storedBefore) expect(storedAfter.get(path), path).toBe(identity);
    expect(filesUnder(join(backupsDir, 'snapshots')).size).toBe(1);
    const temporary = existsSync(join(backupsDir, '.tmp')) ? readdirSync(join(backupsDir, '.tmp')) : [];
    expect(temporary.filter((name) => name.startsWith(`${other.child.pid}-`))).toEqual([]);
  }, 120_000);
});
