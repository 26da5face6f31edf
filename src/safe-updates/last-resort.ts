import { backupsProblems } from '../backups/index.js';
import { isProblem } from '../shared/errors.js';

/** What a safe update uses of the backups feature (passed in by the composition). */
export interface BackupJobs {
  request(siteId: string, kind: 'pre_update'): Promise<{ id: string }>;
  get(
    siteId: string,
    backupId: string,
  ): Promise<{ kind: string; status: string; reason: string | null; error: string | null }>;
  restore(siteId: string, backupId: string): Promise<{ id: string }>;
  getRestore(
    siteId: string,
    restoreId: string,
  ): Promise<{ status: string; reason: string | null; error: string | null }>;
}

/** The backup or restore of the site that holds it (`backup-in-progress`): what a safe update waits for. */
export interface BusyJob {
  id: string;
  /** `scheduled backup bkp_…`, `restore rst_…`: for the report. */
  label: string;
}

/** How long to wait for a backup or restore of the site already under way, and who hears that it waits. */
export interface SiteWait {
  limitMs: number;
  /** When the wait begins, and again when another job took the site meanwhile (awaited before the wait goes on). */
  onWait?: (busy: BusyJob) => void | Promise<void>;
}

/** The wait there was before a job could be started: for what, and how long. */
export type Waited = { busy: BusyJob; ms: number } | null;

const POLL_MS = 250;
const FINISHED = new Set(['completed', 'partial', 'failed']);

/**
 * The backup a safe update takes before updating, and its restore when putting the saved copy
 * back did not heal the site: ordinary backup and restore jobs (incremental, recorded, logged,
 * in the backups pool), awaited. One backup or restore runs per site: when one is already under
 * way (the site's scheduled backup), it is waited for, up to the caller's limit, then asked again.
 */
export function createLastResort({
  backups,
  sleep,
  limitMs = 30 * 60_000,
}: {
  backups: BackupJobs;
  sleep: (ms: number) => Promise<void>;
  limitMs?: number;
}) {
  async function waitFor(read: () => Promise<{ status: string; reason: string | null; error: string | null }>) {
    const deadline = Date.now() + limitMs;
    for (;;) {
      const row = await read();
      if (FINISHED.has(row.status)) return row;
      if (Date.now() > deadline)
        return { status: 'failed', reason: 'timeout', error: `not finished within ${limitMs} ms` };
      await sleep(POLL_MS);
    }
  }
  const describe = (row: { status: string; reason: string | null; error: string | null }) =>
    row.status === 'failed' ? `${row.reason ?? 'failed'}: ${row.error ?? ''}` : undefined;

  async function busyJob(siteId: string, extensions: Record<string, unknown>): Promise<BusyJob> {
    const id = String(extensions.jobId);
    if (extensions.jobKind === 'restore') return { id, label: `restore ${id}` };
    try {
      return { id, label: `${(await backups.get(siteId, id)).kind} backup ${id}` };
    } catch {
      return { id, label: `backup ${id}` };
    }
  }

  /** Starts the job once no other backup or restore of the site is under way; `busy` when one still is at the limit. */
  async function whenSiteFree<T>(
    siteId: string,
    start: () => Promise<T>,
    wait: SiteWait,
  ): Promise<{ started: T; waited: Waited } | { busy: BusyJob; waited: Waited }> {
    const since = Date.now();
    let busy: BusyJob | null = null;
    for (;;) {
      try {
        const started = await start();
        return { started, waited: busy && { busy, ms: Date.now() - since } };
      } catch (error) {
        if (!isProblem(error, backupsProblems.inProgress)) throw error;
        const holder = await busyJob(siteId, error.extensions);
        if (holder.id !== busy?.id) await wait.onWait?.(holder);
        busy = holder;
        if (Date.now() - since >= wait.limitMs) return { busy, waited: { busy, ms: Date.now() - since } };
        await sleep(POLL_MS);
      }
    }
  }

  return {
    /**
     * A fresh backup of the site; its id when it completed (a `partial` one restores too). `busy`:
     * another backup or restore of the site was still under way at the wait's limit; none was taken.
     */
    async backup(
      siteId: string,
      wait: SiteWait,
    ): Promise<{ id: string | null; detail?: string; waited: Waited; busy?: BusyJob }> {
      const requested = await whenSiteFree(siteId, () => backups.request(siteId, 'pre_update'), wait);
      if ('busy' in requested) return { id: null, waited: requested.waited, busy: requested.busy };
      const { id } = requested.started;
      const row = await waitFor(() => backups.get(siteId, id));
      return row.status === 'failed'
        ? { id: null, detail: describe(row), waited: requested.waited }
        : { id, detail: id, waited: requested.waited };
    },
    /** Restores the site from the backup; true when the restore completed. `busy`: as for `backup`, none was started. */
    async restore(
      siteId: string,
      backupId: string,
      wait: SiteWait,
    ): Promise<{ ok: boolean; detail?: string; waited: Waited; busy?: BusyJob }> {
      const requested = await whenSiteFree(siteId, () => backups.restore(siteId, backupId), wait);
      if ('busy' in requested)
        return {
          ok: false,
          detail: `the site's ${requested.busy.label} was still running after ${Math.round(wait.limitMs / 60_000)} min`,
          waited: requested.waited,
          busy: requested.busy,
        };
      const { id } = requested.started;
      const row = await waitFor(() => backups.getRestore(siteId, id));
      return row.status === 'completed'
        ? { ok: true, detail: `restore ${id} of backup ${backupId}`, waited: requested.waited }
        : { ok: false, detail: describe(row), waited: requested.waited };
    },
  };
}
