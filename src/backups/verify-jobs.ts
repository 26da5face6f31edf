import type { Logger } from 'pino';
import { jobEvent, type JobContext, type Settlement } from '../jobs/job-kind.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { JobRow } from '../jobs/jobs.table.js';
import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { createId } from '../shared/ids.js';
import { parseStored, parseStoredOrNull } from '../shared/stored-json.js';
import { backupsProblems } from './backups.errors.js';
import type { BackupsRepository } from './backups.repository.js';
import type { BackupRow } from './backups.table.js';
import type { createStoreLock } from './concurrency.js';
import type { ObjectStore } from './object-store.js';
import { clearDamaged, markDamaged } from './offsite/damage-marks.js';
import { offsiteProblems } from './offsite/offsite.errors.js';
import type { createOffsiteTargets } from './offsite/offsite-targets.js';
import type { RemoteRepository } from './offsite/remote-store.js';
import { LOCAL_TARGET } from './offsite/targets.config.js';
import { verifyBackup, type VerifyResult } from './verify.js';
import {
  damagedEvent,
  failed,
  outcomeOf,
  progressWriter,
  RepairParams,
  requested,
  verifyFailedEvent,
  VerifyParams,
} from './verify-reports.js';

/** A verify is a job (it reads every object of a backup: minutes on a large one); so is a repair. */
const VERIFY_KIND = 'backup-verify';
const REPAIR_KIND = 'backup-repair';
export const CHECK_KINDS = [VERIFY_KIND, REPAIR_KIND] as const;

/** A repair verifies again after sending: a lost manifest part hides the objects behind it until it is back. */
const REPAIR_PASSES = 3;

/**
 * Verify and repair of a backup on one target, as jobs of the job runner: `POST …/verify` answers
 * the queued job, which tells the runner how far it got (files and tables read back, of how many)
 * as it goes and its result when done; the runner writes its row. A verify of an offsite target marks the corrupt objects
 * it found there (damage-marks.ts), so the next copy sends them again; a repair sends every missing
 * or corrupt object again now, from whichever other store holds it whole (its hash checked).
 */
export function createVerifyJobs({
  repository,
  offsite,
  local,
  lock,
  jobs,
  clock,
  logger,
}: {
  repository: BackupsRepository;
  offsite: ReturnType<typeof createOffsiteTargets>;
  local: ObjectStore;
  lock: ReturnType<typeof createStoreLock>;
  jobs: JobRunner;
  clock: Clock;
  logger: Logger;
}) {
  const requireTarget = (target: string) => {
    if (target === LOCAL_TARGET || offsite.names.includes(target)) return target;
    throw offsiteProblems.targetUnknown.create(
      `no backup target is named ${JSON.stringify(target)} (configured: ${[LOCAL_TARGET, ...offsite.names].join(', ')})`,
    );
  };
  const remoteOf = async (target: string): Promise<RemoteRepository | null> =>
    target === LOCAL_TARGET ? null : offsite.openExisting(target);
  const storeOf = async (target: string): Promise<ObjectStore> => (await remoteOf(target))?.store ?? local;
  const findBackup = async (backupId: string): Promise<BackupRow> => {
    const row = await repository.findBackup(backupId);
    if (!row) throw backupsProblems.notFound.create(`backup ${backupId} is no longer there (retention deleted it)`);
    return row;
  };
  async function runVerify(job: JobRow, signal: AbortSignal, context: JobContext): Promise<Settlement> {
    // Unreadable params end the job failed (`stored-data-unreadable`), its backup and target unnamed.
    let stored: VerifyParams | null = null;
    try {
      const params = (stored = parseStored(VerifyParams, job.params, `the params of verify job ${job.id}`));
      const row = await findBackup(params.backupId);
      const remote = await remoteOf(params.target);
      const verified = await verifyBackup({
        store: remote?.store ?? local,
        backup: row,
        sample: params.sample,
        signal,
        onProgress: progressWriter(context),
      });
      // Corrupt objects in a bucket are marked there: the next copy sends them again (missing ones it sends anyway).
      if (remote && verified.corrupt.length > 0) await markDamaged(remote, verified.corrupt);
      const result = { ...verified, target: params.target, sample: params.sample };
      return {
        outcome: { state: 'succeeded', progress: outcomeOf(row, result) },
        events: [
          result.ok
            ? jobEvent('backup.verified', {
                jobId: job.id,
                siteId: row.siteId,
                backupId: row.id,
                target: params.target,
                sample: params.sample,
                objectsChecked: result.objectsChecked,
                ...requested(params.requestedBy),
              })
            : damagedEvent(job, row, params.target, result, params.requestedBy),
        ],
      };
    } catch (error) {
      return failed(job, signal, error, stored);
    }
  }

  /**
   * Sends one object again into `target`: from the first other store that holds it and reads back
   * whole (the put checks its hash before it commits, so a bad copy elsewhere is never spread).
   * The name of the store it came from, or null when none could give it.
   */
  async function resend(
    hash: string,
    target: string,
    into: ObjectStore,
    sources: { name: string; store: () => Promise<ObjectStore> }[],
  ): Promise<string | null> {
    for (const source of sources) {
      try {
        const from = await source.store();
        if (!(await from.has(hash))) continue;
        // The local store keeps an object it holds: the bad one goes first. A remote put overwrites.
        if (target === LOCAL_TARGET) await into.delete(hash);
        await into.put(from.get(hash), hash, { listedAbsent: true });
        return source.name;
      } catch (error) {
        logger.debug({ err: error, hash, source: source.name, target }, 'a repair source could not give an object');
      }
    }
    return null;
  }

  async function runRepair(job: JobRow, signal: AbortSignal, context: JobContext): Promise<Settlement> {
    // Unreadable params end the job failed (`stored-data-unreadable`), its backup and target unnamed.
    let stored: RepairParams | null = null;
    try {
      const params = (stored = parseStored(RepairParams, job.params, `the params of repair job ${job.id}`));
      const row = await findBackup(params.backupId);
      const remote = await remoteOf(params.target);
      const into = remote?.store ?? local;
      // Every other store, local first, each opened once when first needed.
      const sources = [LOCAL_TARGET, ...offsite.names]
        .filter((name) => name !== params.target)
        .map((name) => {
          let opened: Promise<ObjectStore> | undefined;
          return { name, store: () => (opened ??= storeOf(name)) };
        });
      const resentFrom: Record<string, number> = {};
      const unrepairable = new Set<string>();
      let objectsResent = 0;
      let result: VerifyResult | undefined;
      await lock.shared(async () => {
        for (let pass = 1; pass <= REPAIR_PASSES; pass++) {
          result = await verifyBackup({
            store: into,
            backup: row,
            signal,
            onProgress: progressWriter(context, { pass, objectsResent }),
          });
          const bad = [...result.missing, ...result.corrupt].filter((hash) => !unrepairable.has(hash));
          if (bad.length === 0) break;
          const repaired: string[] = [];
          for (const hash of bad) {
            signal.throwIfAborted();
            const source = await resend(hash, params.target, into, sources);
            if (source === null) unrepairable.add(hash);
            else {
              repaired.push(hash);
              resentFrom[source] = (resentFrom[source] ?? 0) + 1;
              objectsResent++;
            }
          }
          if (remote && repaired.length > 0)
            await clearDamaged(
              remote,
              repaired.map((hash) => remote.nameOf(hash)),
            );
          if (repaired.length === 0) break;
        }
      });
      const final = { ...result!, target: params.target, sample: 100 };
      const outcome = {
        state: 'succeeded' as const,
        progress: { ...outcomeOf(row, final), objectsResent, resentFrom, unrepairable: [...unrepairable] },
      };
      const events = [
        jobEvent('backup.repaired', {
          jobId: job.id,
          siteId: row.siteId,
          backupId: row.id,
          target: params.target,
          objectsResent,
          resentFrom,
          stillDamaged: final.missing.length + final.corrupt.length,
          ...requested(params.requestedBy),
        }),
      ];
      if (!final.ok) events.push(damagedEvent(job, row, params.target, final, params.requestedBy));
      return { events, outcome };
    } catch (error) {
      return failed(job, signal, error, stored);
    }
  }

  for (const [kind, run] of [
    [VERIFY_KIND, runVerify],
    [REPAIR_KIND, runRepair],
  ] as const)
    jobs.register(kind, {
      // Reads (and a repair's writes) of a whole backup: one at a time, beside backups and restores.
      pool: { name: 'backup-checks', concurrency: 1 },
      exclusive: false,
      atShutdown: 'abort',
      cancelsWhileRunning: true,
      cancelQueued: () => undefined,
      run,
      recover: {
        // Nothing is half done by a verify; a repair cut short sent whole objects only: run it again.
        running: (job) => {
          const message = 'the daemon stopped while it ran; start it again';
          return {
            outcome: { state: 'failed', reason: 'interrupted', message },
            events: [verifyFailedEvent(job, parseStoredOrNull(RepairParams, job.params), 'interrupted', message)],
          };
        },
      },
    });

  async function enqueue(
    kind: string,
    prefix: string,
    row: BackupRow,
    params: VerifyParams | RepairParams,
  ): Promise<JobRow> {
    const now = clock.now();
    const { job } = await jobs.submit({
      id: createId(prefix, now),
      kind,
      siteId: row.siteId,
      params,
      progress: { filesChecked: 0, files: row.files, tablesChecked: 0, tables: row.tables },
      createdAt: now,
    });
    return job;
  }

  return {
    /** Queues a verify of the backup on `target` (`local` or an offsite one); `backup.verified` or `backup.damaged` says how it ended. */
    async requestVerify(
      row: BackupRow,
      { target = LOCAL_TARGET, sample = 100 }: { target?: string; sample?: number },
      requestedBy?: Actor,
    ): Promise<JobRow> {
      return enqueue(VERIFY_KIND, 'vfy', row, {
        backupId: row.id,
        target: requireTarget(target),
        sample,
        requestedBy: requestedBy ?? null,
      });
    },

    /** Queues a repair of the backup on `target`: what is missing or corrupt there is sent again from a good copy. */
    async requestRepair(
      row: BackupRow,
      { target = LOCAL_TARGET }: { target?: string },
      requestedBy?: Actor,
    ): Promise<JobRow> {
      if ((row.status !== 'completed' && row.status !== 'partial') || !row.manifestHash)
        throw backupsProblems.notCompleted.create(
          `backup ${row.id} is ${row.status}; only a completed backup can be repaired`,
        );
      return enqueue(REPAIR_KIND, 'rpr', row, {
        backupId: row.id,
        target: requireTarget(target),
        requestedBy: requestedBy ?? null,
      });
    },

    /** The newest verify and repair jobs of a site, or of every site (the dashboard). */
    recent: async (limit: number, siteId?: string): Promise<JobRow[]> =>
      [
        ...(await jobs.list({ kind: VERIFY_KIND, siteId, limit })),
        ...(await jobs.list({ kind: REPAIR_KIND, siteId, limit })),
      ]
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
        .slice(0, limit),
  };
}
