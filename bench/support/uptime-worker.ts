/**
 * One uptime worker of a cluster for bench/uptime.ts's `cluster` mode, in a process of its own as the
 * daemon's `--role worker --kinds uptime` runs it: the real uptime service with `cluster` on the bench's
 * PostgreSQL database, probing the loopback targets of the shards it leases, ticked once a second by the
 * daemon's scheduler. Run as `node --import tsx bench/support/uptime-worker.ts` with its plan in
 * `BENCH_UPTIME_WORKER` (JSON, `UptimeWorkerPlan`) and an IPC channel: it sends `ready` once started, measures
 * each probe's lag and its own CPU between `measure` and `report`, answers `report` with a
 * `UptimeWorkerReport`, and on `stop` stops as the daemon does (claimed probes made, results written).
 * With `profile`, the measured span's CPU profile is written there.
 */
import { createWriteStream } from 'node:fs';
import { openStateDatabase } from '../../src/db/state-db.js';
import { createScheduler } from '../../src/jobs/scheduler.js';
import { createLogger } from '../../src/shared/logger.js';
import type { UptimeConfig } from '../../src/uptime/uptime.config.js';
import { benchUptimeService } from './uptime-service.js';
import { startCpuProfile } from './cpu-profile.js';

export interface UptimeWorkerPlan {
  /** The cluster's database (migrated and seeded by the bench). */
  url: string;
  workerId: string;
  config: UptimeConfig;
  /** A .cpuprofile file for the measured span (BENCH_PROFILE). */
  profile?: string;
}

export type UptimeWorkerCommand = 'measure' | 'report' | 'stop';

/** What a worker measured between `measure` and `report`. */
export interface UptimeWorkerReport {
  /** Each probe's lag behind its due time (ms), in start order. */
  lags: number[];
  /** `process.cpuUsage()` over the measured span (µs). */
  cpu: NodeJS.CpuUsage;
  /** The process's peak RSS so far (bytes). */
  peakRss: number;
}

export type UptimeWorkerMessage = { ready: true } | { report: UptimeWorkerReport };

// As the bench's own process does (bench/uptime.ts): the daemon runs compiled code without source maps.
process.setSourceMapsEnabled(false);
const plan = JSON.parse(process.env.BENCH_UPTIME_WORKER ?? '') as UptimeWorkerPlan;
const send = (message: UptimeWorkerMessage) => process.send!(message);
// The bench is gone (killed, failed): so is its worker.
process.on('disconnect', () => process.exit(1));

const state = await openStateDatabase({ url: plan.url, sqlitePath: '', migrate: false });
const logger = createLogger({ level: 'info', destination: createWriteStream('/dev/null') });
let lags: number[] | undefined;
let cpuFrom: NodeJS.CpuUsage | undefined;
let stopProfile: (() => Promise<void>) | undefined;
const service = benchUptimeService(state, {
  logger,
  config: plan.config,
  onProbeStart: (lag) => lags?.push(lag),
  cluster: { state, workerId: plan.workerId, leaseMs: plan.config.leaseSeconds * 1000 },
});
await service.start();
const scheduler = createScheduler({ logger });
scheduler.every('uptime-probes', '* * * * * *', () => service.tick());
await scheduler.runAll();

process.on('message', (command: UptimeWorkerCommand) => void obey(command));

async function obey(command: UptimeWorkerCommand): Promise<void> {
  if (command === 'measure') {
    if (plan.profile) stopProfile = await startCpuProfile(plan.profile);
    lags = [];
    cpuFrom = process.cpuUsage();
  } else if (command === 'report') {
    const cpu = process.cpuUsage(cpuFrom);
    const report = { lags: lags ?? [], cpu, peakRss: process.resourceUsage().maxRSS * 1024 };
    lags = undefined;
    await stopProfile?.();
    send({ report });
  } else {
    await scheduler.stop();
    await service.stop();
    await state.close();
    process.exit(0);
  }
}
send({ ready: true });
