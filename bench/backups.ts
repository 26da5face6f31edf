/**
 * Backup benchmark: a real test WordPress site holding about 1 GB of incompressible media and a
 * database of 100k+ rows, backed up by the built daemon (`dist/`, as systemd runs it).
 * Prints: the full backup's time against `tar czf` of the WordPress directory plus `mysqldump`
 * of its database in the same run; a second backup of the unchanged site (bytes transferred and
 * time against the first); 30 daily backups of a site changing 1% a day (store size against one
 * full backup); a restore; a download; and the daemon's peak RSS (VmHWM) over all of it. Not run by the
 * tests. Usage (figures in docs/benchmarks.md):
 *
 *   npm run build && node --import tsx bench/backups.ts
 *   BENCH_MEDIA_MB=200 BENCH_ROWS=100000 BENCH_DAYS=30 node --import tsx bench/backups.ts
 *
 * BENCH_FILES=200000 adds that many small files (1–4 KiB, 500 to a directory): the daemon's
 * peak RSS then shows whether its memory grows with the number of files (target ≤ 250 MB).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateMedia } from './support/bench-media.js';
import { printSummary, verdict } from './support/summary.js';
import { startDaemonProcess } from '../test/support/daemon-process.js';
import { startPrivateMariaDb } from '../test/support/mariadb.js';
import { startPluginMirror } from '../test/support/plugin-mirror.js';
import { FIXTURES_DIR } from '../test/support/wordpress/paths.js';
import { provisionTestSite, type TestSite } from '../test/support/wordpress/test-site.js';
import { createRunDir, removeRunDir } from '../test/support/work-dir.js';

const ROOT = resolve(import.meta.dirname, '..');
const MEDIA_MB = Number(process.env.BENCH_MEDIA_MB ?? 1024);
const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const DAYS = Number(process.env.BENCH_DAYS ?? 30);
const MANY_FILES = Number(process.env.BENCH_FILES ?? 0);
const MiB = 1024 * 1024;
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const mb = (bytes: number) => `${round(bytes / MiB, 1)} MiB`;

/** Many small files, as a site with a large media library's thumbnails or a cache plugin leaves them. */
function generateManyFiles(site: TestSite): void {
  for (let i = 0; i < MANY_FILES; i++) {
    const dir = join(site.root, `wp-content/uploads/many/${String(Math.floor(i / 500)).padStart(4, '0')}`);
    if (i % 500 === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `file-${i}.txt`), randomBytes(512 + (i % 1536)).toString('base64'));
  }
}

function mariadb(socket: string, database: string, sql: string): string {
  return execFileSync('mariadb', ['--no-defaults', `--socket=${socket}`, '-uroot', database, '-N', '-e', sql], {
    encoding: 'utf8',
    maxBuffer: 64 * MiB,
  });
}

/** The process's user + system CPU seconds (/proc/<pid>/stat fields 14 and 15, at 100 ticks a second). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

interface MemorySample {
  pid: number;
  t: number;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  malloced: number;
}

/** The daemon's own samples (processes it starts, such as audit workers, sample themselves into the same file). */
const readSamples = (path: string, pid: number): MemorySample[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as MemorySample)
    .filter((sample) => sample.pid === pid);

/** A phase's peaks, and every figure at its RSS peak (and when within the phase it came). */
function phaseMemory(name: string, start: number, end: number, samples: MemorySample[]): string {
  const within = samples.filter((sample) => sample.t >= start && sample.t <= end);
  if (within.length === 0) return `${name}: no samples`;
  const top = (key: keyof MemorySample) => Math.max(...within.map((sample) => sample[key]));
  const atPeak = within.reduce((a, b) => (b.rss > a.rss ? b : a));
  return `${name}: ${within.length} samples; max rss ${top('rss')} heapTotal ${top('heapTotal')} heapUsed ${top('heapUsed')} arrayBuffers ${top('arrayBuffers')} malloced ${top('malloced')}; at the rss peak (+${round((atPeak.t - start) / 1000, 1)} s of ${round((end - start) / 1000, 1)} s): ${JSON.stringify(atPeak)}`;
}

function duBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stats = statSync(path);
    total += stats.isDirectory() ? duBytes(path) : stats.size;
  }
  return total;
}

async function main() {
  if (!existsSync(join(ROOT, 'dist/src/cli.js'))) throw new Error('run `npm run build` first');
  const runDir = createRunDir();
  const db = await startPrivateMariaDb({ dir: runDir });
  const mirror = await startPluginMirror({
    fixturesDir: join(FIXTURES_DIR, 'directory'),
    zipDir: join(runDir, 'mirror'),
    forks: [],
  });
  const site = await provisionTestSite({
    mariadbSocket: db.socketPath,
    pluginMirrorUrl: mirror.url,
    testWorkDir: runDir,
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-bench-backups-'));
  const scratch = mkdtempSync(join(tmpdir(), 'sitewarden-bench-baseline-'));
  let daemon: Awaited<ReturnType<typeof startDaemonProcess>> | undefined;
  try {
    cpSync(join(ROOT, 'connector'), join(site.root, 'wp-content/plugins/sitewarden-connector'), { recursive: true });
    await site.php(
      `require_once ABSPATH . 'wp-admin/includes/plugin.php'; activate_plugin( 'sitewarden-connector/sitewarden-connector.php' );`,
    );
    const database = /define\( 'DB_NAME', '([^']+)' \)/.exec(
      readFileSync(join(site.root, 'wp-config.php'), 'utf8'),
    )![1]!;

    console.log(`generating ${MEDIA_MB} MiB of media and ${ROWS} rows…`);
    generateMedia(site.root, MEDIA_MB);
    generateManyFiles(site);
    mariadb(
      db.socketPath,
      database,
      `CREATE TABLE wp_bench_events ( id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, created DATETIME NOT NULL, kind VARCHAR(20) NOT NULL, payload TEXT NOT NULL, digest BINARY(32) NOT NULL ) ENGINE=InnoDB;
      INSERT INTO wp_bench_events (created, kind, payload, digest) SELECT NOW() - INTERVAL seq MINUTE, ELT(1 + seq % 4, 'view', 'click', 'order', 'login'), CONCAT('{"visitor":"', MD5(seq), '","path":"/page-', seq % 500, '/","ms":', seq % 997, '}'), UNHEX(SHA2(seq, 256)) FROM seq_1_to_${ROWS};`,
    );
    const siteBytes = duBytes(site.root);
    console.log(
      `site: ${mb(siteBytes)} of files, ${mariadb(db.socketPath, database, 'SELECT SUM(TABLE_ROWS) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()').trim()} rows`,
    );

    // Baseline: tar czf of the WordPress directory plus mysqldump of its database.
    const baselineStart = performance.now();
    const tar = spawnSync('tar', ['czf', join(scratch, 'site.tar.gz'), '-C', site.root, '.']);
    if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
    const dump = spawnSync('sh', [
      '-c',
      `mysqldump --no-defaults --socket=${db.socketPath} -uroot --single-transaction ${database} > ${join(scratch, 'db.sql')}`,
    ]);
    if (dump.status !== 0) throw new Error(`mysqldump failed: ${dump.stderr}`);
    const baselineMs = performance.now() - baselineStart;
    rmSync(scratch, { recursive: true, force: true });

    // BENCH_MEMORY_LOG=<file>: the daemon samples its memory every 250 ms into it, and each phase's peaks are printed.
    const memoryLog = process.env.BENCH_MEMORY_LOG ? resolve(process.env.BENCH_MEMORY_LOG) : undefined;
    if (memoryLog) writeFileSync(memoryLog, '');
    const phases: { name: string; start: number; end: number }[] = [];
    const phase = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
      const start = Date.now();
      try {
        return await work();
      } finally {
        phases.push({ name, start, end: Date.now() });
        // As each phase ends: a run stopped part-way still tells what it measured.
        if (memoryLog) console.log(phaseMemory(name, start, Date.now(), readSamples(memoryLog, daemon!.child.pid!)));
      }
    };
    daemon = await startDaemonProcess({
      ...(memoryLog
        ? {
            NODE_OPTIONS: `--import=${join(ROOT, 'bench/support/memory-sampler.mjs')}`,
            BENCH_MEMORY_LOG: memoryLog,
          }
        : {}),
      SITEWARDEN_DATA_DIR: dataDir,
      SITEWARDEN_BACKUP_INTERVAL_HOURS: '0',
      SITEWARDEN_BACKUP_KEEP_LAST: '1000',
    });
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const api = async (method: string, path: string, json?: unknown) => {
      const response = await fetch(`http://127.0.0.1:${daemon!.port}/api${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(json ? { 'content-type': 'application/json' } : {}) },
        body: json ? JSON.stringify(json) : undefined,
      });
      const text = await response.text();
      if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return JSON.parse(text);
    };
    const { id: siteId } = await api('POST', '/sites', {
      url: site.url,
      username: site.admin.username,
      applicationPassword: site.admin.applicationPassword,
    });
    const backUp = async () => {
      const start = performance.now();
      const { id } = await api('POST', `/sites/${siteId}/backups`);
      for (;;) {
        const backup = await api('GET', `/sites/${siteId}/backups/${id}`);
        if (backup.status === 'completed') return { ...backup, ms: performance.now() - start };
        if (backup.status === 'failed') throw new Error(`backup failed: ${backup.reason}: ${backup.error}`);
        await sleep(100);
      }
    };

    const rssAtStart = peakRssMb(daemon.child.pid!);
    const cpuAtStart = cpuSeconds(daemon.child.pid!);
    await sleep(3000);
    const idle = memoryLog ? readSamples(memoryLog, daemon.child.pid!).at(-1) : undefined;
    const first = await phase('first backup', backUp);
    const firstCpu = cpuSeconds(daemon.child.pid!) - cpuAtStart;
    const rssAfterFirst = peakRssMb(daemon.child.pid!);
    const storeAfterFirst = duBytes(join(dataDir, 'backups/objects'));
    const second = await phase('second backup', backUp);

    // A site changing 1% a day: new uploads (1% of the media) and 1% new rows, some recent rows edited.
    const dailyMedia = Math.max(1, Math.round((MEDIA_MB * 0.01) / 2));
    const dailyRows = Math.round(ROWS * 0.01);
    let dailyMs = 0;
    for (let day = 1; day <= DAYS; day++) {
      const dir = join(site.root, `wp-content/uploads/2026/day-${day}`);
      mkdirSync(dir, { recursive: true });
      for (let i = 0; i < dailyMedia; i++) writeFileSync(join(dir, `upload-${i}.bin`), randomBytes(2 * MiB));
      mariadb(
        db.socketPath,
        database,
        `INSERT INTO wp_bench_events (created, kind, payload, digest) SELECT NOW(), 'view', CONCAT('{"day":${day},"n":', seq, '}'), UNHEX(SHA2(CONCAT(${day}, '-', seq), 256)) FROM seq_1_to_${dailyRows};
        UPDATE wp_bench_events SET kind = 'edited' ORDER BY id DESC LIMIT ${Math.round(dailyRows / 10)};`,
      );
      dailyMs += (await phase(`daily backup ${day}`, backUp)).ms;
    }
    const storeAfterDays = duBytes(join(dataDir, 'backups/objects'));
    const rssAfterDays = peakRssMb(daemon.child.pid!);

    const restoreStart = performance.now();
    await phase('restore', async () => {
      const restore = await api('POST', `/sites/${siteId}/backups/${first.id}/restore`);
      for (;;) {
        const state = await api('GET', `/sites/${siteId}/restores/${restore.id}`);
        if (state.status === 'completed') break;
        if (state.status === 'failed') throw new Error(`restore failed: ${state.reason}: ${state.error}`);
        await sleep(200);
      }
    });
    const restoreMs = performance.now() - restoreStart;
    const rssAfterRestore = peakRssMb(daemon.child.pid!);

    // The download of the first backup, read to its end and thrown away.
    const downloadStart = performance.now();
    let downloadBytes = 0;
    await phase('download', async () => {
      const download = await fetch(
        `http://127.0.0.1:${daemon!.port}/api/sites/${siteId}/backups/${first.id}/download`,
        {
          headers: { authorization: `Bearer ${token}` },
        },
      );
      if (download.status !== 200) throw new Error(`download: ${download.status} ${await download.text()}`);
      for await (const chunk of download.body!) downloadBytes += chunk.length;
    });
    const downloadMs = performance.now() - downloadStart;
    const peak = peakRssMb(daemon.child.pid!);
    const daemonCpu = cpuSeconds(daemon.child.pid!) - cpuAtStart;

    const figures = {
      siteFiles: mb(siteBytes),
      manySmallFiles: MANY_FILES,
      rows: ROWS,
      baselineTarPlusMysqldumpS: round(baselineMs / 1000, 1),
      fullBackupS: round(first.ms / 1000, 1),
      fullBackupRatio: round(first.ms / baselineMs),
      fullBackupTransferred: mb(first.bytes.transferred),
      fullBackupStored: mb(storeAfterFirst),
      secondBackupS: round(second.ms / 1000, 1),
      secondTimePercent: round((100 * second.ms) / first.ms),
      secondTransferred: mb(second.bytes.transferred),
      secondTransferredPercent: round((100 * second.bytes.transferred) / first.bytes.transferred, 3),
      days: DAYS,
      dailyBackupAverageS: round(dailyMs / DAYS / 1000, 1),
      storeAfterDays: mb(storeAfterDays),
      storeAfterDaysRatio: round(storeAfterDays / storeAfterFirst),
      restoreS: round(restoreMs / 1000, 1),
      downloadS: round(downloadMs / 1000, 1),
      downloadGzip: mb(downloadBytes),
      firstBackupDaemonCpuS: round(firstCpu, 1),
      daemonCpuS: round(daemonCpu, 1),
      daemonPeakRssMb: round(peak, 0),
      daemonPeakRssMbByPhase: {
        started: round(rssAtStart, 0),
        firstBackup: round(rssAfterFirst, 0),
        dailyBackups: round(rssAfterDays, 0),
        restore: round(rssAfterRestore, 0),
        download: round(peak, 0),
      },
    };
    console.log(JSON.stringify(figures, null, 2));
    if (memoryLog) {
      await sleep(500);
      const samples = readSamples(memoryLog, daemon.child.pid!);
      console.log(`idle daemon (connected, 3 s after start): ${JSON.stringify(idle)}`);
      for (const { name, start, end } of phases) console.log(phaseMemory(name, start, end, samples));
    }
    const targets = [
      ['full backup ≤ 2× tar czf + mysqldump', figures.fullBackupRatio <= 2],
      ['second backup transfers ≤ 1%', figures.secondTransferredPercent <= 1],
      ['second backup takes ≤ 10%', figures.secondTimePercent <= 10],
      [`${DAYS} daily backups ≤ 1.5× one full backup`, figures.storeAfterDaysRatio <= 1.5],
      ['daemon peak RSS ≤ 200 MB', figures.daemonPeakRssMb <= 200],
      ...(MANY_FILES > 0
        ? ([
            [
              `daemon peak RSS backing up, restoring and downloading ${MANY_FILES} more files ≤ 250 MB`,
              figures.daemonPeakRssMb <= 250,
            ],
          ] as const)
        : []),
    ] as const;
    for (const [target, met] of targets) console.log(`${met ? 'MET   ' : 'MISSED'} ${target}`);
    const rssLimit = MANY_FILES > 0 ? 250 : 200;
    printSummary(`backups (${MEDIA_MB} MiB of media, ${ROWS} rows, ${MANY_FILES} extra files, ${DAYS} days)`, [
      {
        figure: 'full backup; baseline: tar czf + mysqldump',
        value: `${figures.fullBackupS} s, ${figures.fullBackupRatio}×`,
        baseline: `${figures.baselineTarPlusMysqldumpS} s`,
        target: verdict('≤ 2×', figures.fullBackupRatio <= 2),
      },
      {
        figure: 'second backup of the unchanged site; baseline: the first',
        value: `${figures.secondTransferred} (${figures.secondTransferredPercent} %), ${figures.secondBackupS} s (${figures.secondTimePercent} %)`,
        baseline: `${figures.fullBackupTransferred}, ${figures.fullBackupS} s`,
        target: verdict('≤ 1 %, ≤ 10 %', figures.secondTransferredPercent <= 1 && figures.secondTimePercent <= 10),
      },
      {
        figure: `store after ${DAYS} daily backups, 1 % change a day; baseline: one full backup`,
        value: `${figures.storeAfterDays}, ${figures.storeAfterDaysRatio}×`,
        baseline: figures.fullBackupStored,
        target: verdict('≤ 1.5×', figures.storeAfterDaysRatio <= 1.5),
      },
      { figure: 'restore of the first backup', value: `${figures.restoreS} s` },
      { figure: 'download (tar.gz)', value: `${figures.downloadS} s, ${figures.downloadGzip}` },
      {
        figure: 'daemon peak RSS (VmHWM)',
        value: `${figures.daemonPeakRssMb} MB`,
        target: verdict(`≤ ${rssLimit} MB`, figures.daemonPeakRssMb <= rssLimit),
      },
    ]);
  } catch (error) {
    if (daemon) console.error(`daemon output (tail):\n${daemon.logs().slice(-4000)}`);
    throw error;
  } finally {
    daemon?.child.kill('SIGTERM');
    await daemon?.exited;
    await site.stop();
    await mirror.close();
    await db.stop();
    removeRunDir(runDir);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
