/**
 * Offsite benchmark (issue 18): a real test WordPress site with BENCH_MEDIA_MB of incompressible
 * media (default 1024, the 1 GB-class site), backed up by the built daemon (`dist/`) to the local
 * store and an S3 target, s3rver on loopback, in the same run as a bare-SDK upload of the same
 * bytes. Prints:
 *
 * - the offsite copy's throughput (bytes the bucket received between its first and last object,
 *   as s3rver reports them) against PutObject of the local store's objects with the bare SDK, at
 *   the daemon's upload concurrency (16) and at 4;
 * - encryption's CPU share: AES-256-GCM sealing of the uploaded bytes measured in this process,
 *   against the daemon's own CPU time over the offsite copy;
 * - the daemon's peak RSS (VmHWM) over the whole backup;
 * - what the second backup of the unchanged site uploads against the first.
 *
 * Usage (figures in docs/benchmarks.md):
 *
 *   npm run build && node --import tsx bench/offsite.ts
 *   BENCH_MEDIA_MB=300 node --import tsx bench/offsite.ts
 */
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import {
  cpSync,
  createReadStream,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import S3rver from 's3rver';
import { forEachConcurrently } from '../src/backups/concurrency.js';
import { sealStream } from '../src/backups/offsite/sealed-stream.js';
import { generateMedia } from './support/bench-media.js';
import { printSummary, verdict } from './support/summary.js';
import { startDaemonProcess } from '../test/support/daemon-process.js';
import { startPrivateMariaDb } from '../test/support/mariadb.js';
import { startPluginMirror } from '../test/support/plugin-mirror.js';
import { FIXTURES_DIR } from '../test/support/wordpress/paths.js';
import { provisionTestSite } from '../test/support/wordpress/test-site.js';
import { createRunDir, removeRunDir } from '../test/support/work-dir.js';

const ROOT = resolve(import.meta.dirname, '..');
const MEDIA_MB = Number(process.env.BENCH_MEDIA_MB ?? 1024);
/** The daemon's uploads at once per target (src/backups/offsite/replicate.ts). */
const DAEMON_UPLOADS = 16;
const BUCKET = 'sitewarden-bench';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const MiB = 1024 * 1024;
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const CLOCK_TICKS = 100;

/** The process's user + system CPU seconds (/proc/<pid>/stat fields 14 and 15). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

const peakRssMb = (pid: number) =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

interface Created {
  t: number;
  key: string;
  size: number;
}

/** Objects the bucket received under `prefix` within [start, end]: count, bytes and the span from first to last. */
function received(created: Created[], prefix: string, start: number, end: number) {
  const within = created.filter((event) => event.key.startsWith(prefix) && event.t >= start && event.t <= end);
  const bytes = within.reduce((sum, event) => sum + event.size, 0);
  const first = Math.min(...within.map((event) => event.t));
  const last = Math.max(...within.map((event) => event.t));
  return { objects: within.length, bytes, first, last, seconds: within.length > 1 ? (last - first) / 1000 : 0 };
}

/** CPU seconds this process spends sealing `bytes` of incompressible data in AES-256-GCM frames. */
async function sealingCpuSeconds(bytes: number): Promise<number> {
  const block = randomBytes(MiB);
  const before = process.cpuUsage();
  await pipeline(
    Readable.from(
      (function* () {
        for (let sent = 0; sent < bytes; sent += block.length) yield block;
      })(),
    ),
    sealStream(randomBytes(32), 'bench'),
    async function (source) {
      for await (const _ of source);
    },
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e6;
}

async function main() {
  if (!readdirSync(join(ROOT, 'dist/src')).includes('cli.js')) throw new Error('run `npm run build` first');
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
  const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-bench-offsite-'));
  const bucketDir = mkdtempSync(join(tmpdir(), 'sitewarden-bench-s3rver-'));
  const created: Created[] = [];
  const s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: bucketDir,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  s3.on('event', (event) => {
    for (const record of event.Records)
      if (record.eventName.startsWith('ObjectCreated'))
        created.push({
          t: Date.now(),
          key: decodeURIComponent(record.s3.object.key),
          size: record.s3.object.size ?? 0,
        });
  });
  const { port } = (await s3.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  let daemon: Awaited<ReturnType<typeof startDaemonProcess>> | undefined;
  try {
    cpSync(join(ROOT, 'connector'), join(site.root, 'wp-content/plugins/sitewarden-connector'), { recursive: true });
    await site.php(
      `require_once ABSPATH . 'wp-admin/includes/plugin.php'; activate_plugin( 'sitewarden-connector/sitewarden-connector.php' );`,
    );
    console.log(`generating ${MEDIA_MB} MiB of media…`);
    generateMedia(site.root, MEDIA_MB);

    // BENCH_MEMORY_LOG=<file>: the daemon samples its memory every 250 ms into it (bench/support/memory-sampler.mjs); the sample at the peak is printed.
    const memoryLog = process.env.BENCH_MEMORY_LOG ? resolve(process.env.BENCH_MEMORY_LOG) : undefined;
    if (memoryLog) writeFileSync(memoryLog, '');
    daemon = await startDaemonProcess({
      ...(memoryLog
        ? { NODE_OPTIONS: `--import=${join(ROOT, 'bench/support/memory-sampler.mjs')}`, BENCH_MEMORY_LOG: memoryLog }
        : {}),
      SITEWARDEN_DATA_DIR: dataDir,
      SITEWARDEN_BACKUP_INTERVAL_HOURS: '0',
      SITEWARDEN_TARGETS: 'bench',
      SITEWARDEN_TARGET_BENCH_ENDPOINT: endpoint,
      SITEWARDEN_TARGET_BENCH_BUCKET: BUCKET,
      SITEWARDEN_TARGET_BENCH_PREFIX: 'daemon/',
      SITEWARDEN_TARGET_BENCH_PATH_STYLE: 'on',
      SITEWARDEN_TARGET_BENCH_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      SITEWARDEN_TARGET_BENCH_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      SITEWARDEN_TARGET_BENCH_PASSPHRASE: 'a benchmark passphrase',
    });
    const pid = daemon.child.pid!;
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
    // The daemon's CPU seconds every 100 ms, to read off its CPU time over the copy's span.
    const cpu: { t: number; seconds: number }[] = [];
    const sampler = setInterval(() => cpu.push({ t: Date.now(), seconds: cpuSeconds(pid) }), 100);
    const cpuAt = (t: number) => (cpu.find((sample) => sample.t >= t) ?? cpu.at(-1)!).seconds;
    const backUp = async () => {
      const start = Date.now();
      const { id } = await api('POST', `/sites/${siteId}/backups`);
      for (;;) {
        const backup = await api('GET', `/sites/${siteId}/backups/${id}`);
        if (backup.status === 'completed') return { ...backup, start, end: Date.now() };
        if (backup.status !== 'queued' && backup.status !== 'running')
          throw new Error(`backup ${backup.status}: ${backup.reason}: ${backup.error}`);
        await sleep(100);
      }
    };

    const rssBefore = peakRssMb(pid);
    const first = await backUp();
    const firstCopy = received(created, 'daemon/', first.start, first.end);
    const daemonCopyCpu = cpuAt(firstCopy.last) - cpuAt(firstCopy.first);
    const rssAfterFirst = peakRssMb(pid);
    const second = await backUp();
    const secondCopy = received(created, 'daemon/', second.start, second.end);
    clearInterval(sampler);

    // The same bytes with the bare SDK: every object of the local store, as stored (gzip), one PutObject each.
    const objects = filesUnder(join(dataDir, 'backups/objects'));
    const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: CREDENTIALS });
    const bare = async (concurrency: number) => {
      const start = Date.now();
      await forEachConcurrently(objects, concurrency, async (path) => {
        await client.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: `bare-${concurrency}/${path.slice(-64)}`,
            Body: createReadStream(path),
            ContentLength: statSync(path).size,
          }),
        );
      });
      return received(created, `bare-${concurrency}/`, start, Date.now());
    };
    const bareSame = await bare(DAEMON_UPLOADS);
    const bareWide = await bare(4);
    client.destroy();

    const sealCpu = await sealingCpuSeconds(firstCopy.bytes);
    const mibPerS = (copy: { bytes: number; seconds: number }) => round(copy.bytes / MiB / copy.seconds, 1);
    const bestBare = Math.max(mibPerS(bareSame), mibPerS(bareWide));
    const figures = {
      mediaMb: MEDIA_MB,
      firstBackupS: round((first.end - first.start) / 1000, 1),
      offsiteCopy: { objects: firstCopy.objects, mib: round(firstCopy.bytes / MiB, 1), seconds: firstCopy.seconds },
      offsiteMibPerS: mibPerS(firstCopy),
      bareSdk: {
        [`concurrency${DAEMON_UPLOADS}`]: {
          objects: bareSame.objects,
          mib: round(bareSame.bytes / MiB, 1),
          seconds: bareSame.seconds,
          mibPerS: mibPerS(bareSame),
        },
        concurrency4: {
          objects: bareWide.objects,
          mib: round(bareWide.bytes / MiB, 1),
          seconds: bareWide.seconds,
          mibPerS: mibPerS(bareWide),
        },
      },
      throughputRatio: round(mibPerS(firstCopy) / bestBare),
      daemonCpuOverCopyS: round(daemonCopyCpu, 1),
      sealingCpuS: round(sealCpu, 2),
      encryptionCpuShare: round(sealCpu / daemonCopyCpu, 3),
      daemonPeakRssMb: {
        started: round(rssBefore, 0),
        firstBackup: round(rssAfterFirst, 0),
        secondBackup: round(peakRssMb(pid), 0),
      },
      secondBackupUploaded: { objects: secondCopy.objects, mib: round(secondCopy.bytes / MiB, 3) },
      secondUploadedPercent: round((100 * secondCopy.bytes) / firstCopy.bytes, 3),
    };
    console.log(JSON.stringify(figures, null, 2));
    if (memoryLog) {
      const samples = readFileSync(memoryLog, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { pid: number; t: number; rss: number })
        .filter((sample) => sample.pid === pid && sample.t >= first.start && sample.t <= first.end);
      const top = samples.reduce((a, b) => (b.rss > a.rss ? b : a));
      console.log(
        `first backup's rss peak, +${round((top.t - first.start) / 1000, 1)} s (copy from +${round((firstCopy.first - first.start) / 1000, 1)} s): ${JSON.stringify(top)}`,
      );
    }
    const targets = [
      ['offsite copy ≥ 0.8× the bare SDK’s throughput', figures.throughputRatio >= 0.8],
      ['encryption ≤ 10 % of the copy’s CPU', figures.encryptionCpuShare <= 0.1],
      ['daemon peak RSS during the offsite backup ≤ 200 MB', rssAfterFirst <= 200],
      ['second offsite backup uploads ≤ 1 % of the first', figures.secondUploadedPercent <= 1],
    ] as const;
    for (const [target, met] of targets) console.log(`${met ? 'MET   ' : 'MISSED'} ${target}`);
    printSummary(`offsite (${MEDIA_MB} MiB of media)`, [
      {
        figure: `offsite copy; baseline: PutObject of the same objects with the bare SDK (${DAEMON_UPLOADS} / 4 at once)`,
        value: `${figures.offsiteMibPerS} MiB/s (${firstCopy.objects} objects, ${figures.offsiteCopy.mib} MiB); ${figures.throughputRatio}× the best`,
        baseline: `${mibPerS(bareSame)} / ${mibPerS(bareWide)} MiB/s`,
        target: verdict('≥ 0.8×', figures.throughputRatio >= 0.8),
      },
      {
        figure: "sealing CPU; baseline: the daemon's CPU over the copy",
        value: `${figures.sealingCpuS} s, ${round(100 * figures.encryptionCpuShare, 1)} %`,
        baseline: `${figures.daemonCpuOverCopyS} s`,
        target: verdict('≤ 10 %', figures.encryptionCpuShare <= 0.1),
      },
      {
        figure: 'daemon peak RSS (VmHWM), first backup with its copy',
        value: `${round(rssAfterFirst, 0)} MB (${round(rssBefore, 0)} after start)`,
        target: verdict('≤ 200 MB', rssAfterFirst <= 200),
      },
      {
        figure: 'second backup of the unchanged site, uploaded; baseline: the first',
        value: `${figures.secondBackupUploaded.mib} MiB, ${figures.secondUploadedPercent} %`,
        baseline: `${figures.offsiteCopy.mib} MiB`,
        target: verdict('≤ 1 %', figures.secondUploadedPercent <= 1),
      },
    ]);
  } catch (error) {
    if (daemon) console.error(`daemon output (tail):\n${daemon.logs().slice(-4000)}`);
    throw error;
  } finally {
    daemon?.child.kill('SIGTERM');
    await daemon?.exited;
    await s3.close();
    await site.stop();
    await mirror.close();
    await db.stop();
    removeRunDir(runDir);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(bucketDir, { recursive: true, force: true });
  }
}

await main();
