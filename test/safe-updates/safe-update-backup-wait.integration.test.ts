import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installFixturePlugin, useConnectedSite, wordpressPlugins } from '../support/wordpress-state.js';

/**
 * A safe update asked for while the site's scheduled backup runs (one backup or restore runs per
 * site): its own backup before the update waits for that one, then goes on. The scheduled backup
 * is held on a real WordPress by a must-use plugin that keeps the first page of the backup's file
 * listing waiting while a flag file exists, so the test decides when it finishes.
 */
const bed = useConnectedSite();
let holdDir: string;
/** While it exists, a backup's file listing waits (at most a minute). */
const flag = () => join(holdDir, 'hold');
/** Written by the site once it holds a listing: the backup is running. */
const held = () => join(holdDir, 'held');

beforeAll(() => {
  holdDir = mkdtempSync(join(tmpdir(), 'sitewarden-hold-backup-'));
  const muPlugins = join(bed.site.root, 'wp-content/mu-plugins');
  mkdirSync(muPlugins, { recursive: true });
  writeFileSync(
    join(muPlugins, 'sitewarden-test-hold-backup.php'),
    `<?php
// Test only: holds the first page of a backup's file listing while the flag file exists.
add_filter( 'rest_pre_dispatch', function ( $result, $server, $request ) {
  $flag = ${JSON.stringify(flag())};
  if ( '/sitewarden/v1/backup/files' !== $request->get_route() || ! file_exists( $flag ) ) return $result;
  touch( ${JSON.stringify(held())} );
  $until = time() + 60;
  while ( file_exists( $flag ) && time() < $until ) { usleep( 50000 ); clearstatcache(); }
  return $result;
}, 10, 3 );
`,
  );
});
afterAll(async () => {
  if (holdDir) rmSync(holdDir, { recursive: true, force: true });
  await bed.t?.services.backups.idle();
});

const policy = { settleMs: 300, attempts: 2, retryDelayMs: 500, backup: true, visual: { enabled: false } };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(reached: () => boolean | Promise<boolean>, what: string, limitMs = 60_000) {
  const deadline = Date.now() + limitMs;
  while (!(await reached())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await sleep(50);
  }
}

/** The site's scheduled backup, running and held at its file listing until `release`. */
async function heldScheduledBackup() {
  rmSync(held(), { force: true });
  writeFileSync(flag(), '');
  const scheduled = await bed.t.services.backups.request(bed.siteId, 'scheduled');
  await until(() => existsSync(held()), 'the scheduled backup reached the site');
  expect((await bed.t.services.backups.get(bed.siteId, scheduled.id)).status).toBe('running');
  return { id: scheduled.id, release: () => rmSync(flag(), { force: true }) };
}

async function startSafeUpdate(body: Record<string, unknown>) {
  const started = await bed.t.call('POST', `/api/sites/${bed.siteId}/plugins/sitewarden-demo/safe-update`, {
    json: body,
  });
  expect(started.status, started.text).toBe(202);
  return `/api/sites/${bed.siteId}/safe-updates/${started.json.id}`;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the safe update as the API answers it
async function read(path: string): Promise<any> {
  const answer = await bed.t.call('GET', path);
  expect(answer.status, answer.text).toBe(200);
  return answer.json;
}

const steps = (report: { steps: { step: string; ok: boolean }[] }) => report.steps.map((step) => [step.step, step.ok]);
const demoVersion = async () => (await wordpressPlugins(bed.site))['sitewarden-demo/sitewarden-demo.php']?.Version;

describe('a safe update while the site’s scheduled backup runs', { timeout: 240_000 }, () => {
  it('gives up at the policy’s backupWaitMinutes, updating nothing, and says which backup held it', async () => {
    installFixturePlugin(bed.site, 'sitewarden-demo', '1.0.0');
    const scheduled = await heldScheduledBackup();
    try {
      const path = await startSafeUpdate({ policy: { ...policy, backupWaitMinutes: 0 } });
      await bed.t.services.safeUpdates.idle();
      const report = await read(path);
      expect(report, JSON.stringify(report)).toMatchObject({
        status: 'failed',
        reason: 'backup-in-progress',
        phase: 'done',
        fromVersion: '1.0.0',
      });
      expect(report.message).toContain(`scheduled backup ${scheduled.id} was still running after 0 min`);
      expect(report.message).toContain('nothing was updated');
      expect(steps(report)).toEqual([
        ['restore-point', true],
        ['wait-for-backup', false],
      ]);
      expect(await demoVersion()).toBe('1.0.0');
    } finally {
      scheduled.release();
      await bed.t.services.backups.idle();
    }
    expect((await bed.t.services.backups.get(bed.siteId, scheduled.id)).status).toBe('completed');
  });

  it('waits for it, showing so, then takes its own backup and updates', async () => {
    const scheduled = await heldScheduledBackup();
    let path: string;
    try {
      path = await startSafeUpdate({ policy });
      const waiting = await (async () => {
        let update = await read(path);
        await until(async () => (update = await read(path)).phase === 'waiting-for-backup', 'the safe update waits');
        return update;
      })();
      expect(waiting).toMatchObject({ status: 'running' });
      expect(waiting.message).toContain(`waiting for the site's scheduled backup ${scheduled.id} to finish`);
      // The job says so too.
      const job = (await bed.t.call('GET', `/api/jobs/${waiting.id}`)).json;
      expect(job, JSON.stringify(job)).toMatchObject({ state: 'running', message: waiting.message });
      // It neither gives up nor updates while the backup runs.
      await sleep(1_500);
      expect(await read(path)).toMatchObject({ status: 'running', phase: 'waiting-for-backup' });
      expect(await demoVersion()).toBe('1.0.0');
    } finally {
      scheduled.release();
    }
    await bed.t.services.safeUpdates.idle();
    await bed.t.services.backups.idle();

    const report = await read(path);
    expect(report, JSON.stringify(report)).toMatchObject({
      status: 'kept',
      reason: null,
      message: null,
      phase: 'done',
      fromVersion: '1.0.0',
      toVersion: '1.1.0',
    });
    expect(steps(report)).toEqual([
      ['restore-point', true],
      ['wait-for-backup', true],
      ['backup', true],
      ['update', true],
    ]);
    const wait = report.steps.find((step: { step: string }) => step.step === 'wait-for-backup');
    expect(wait.detail).toMatch(new RegExp(`^the site's scheduled backup ${scheduled.id} finished after \\d+ s$`));
    expect(wait.durationMs).toBeGreaterThanOrEqual(1_500);
    expect(await demoVersion()).toBe('1.1.0');

    // Both backups completed: the scheduled one, then the safe update's own, taken after it.
    const backups = (await bed.t.call('GET', `/api/sites/${bed.siteId}/backups`)).json.items as {
      id: string;
      kind: string;
      status: string;
      startedAt: string;
      finishedAt: string;
    }[];
    const scheduledRow = backups.find((backup) => backup.id === scheduled.id)!;
    const own = backups.find((backup) => backup.kind === 'pre_update')!;
    expect(scheduledRow).toMatchObject({ status: 'completed' });
    expect(own).toMatchObject({ status: 'completed' });
    expect(Date.parse(own.startedAt)).toBeGreaterThanOrEqual(Date.parse(scheduledRow.finishedAt));
    expect(report.steps.find((step: { step: string }) => step.step === 'backup').detail).toBe(own.id);
  });
});
