/** What a safe update uses of the backups feature (passed in by the composition). */
export interface BackupJobs {
  request(siteId: string, kind: 'pre_update'): { id: string };
  get(siteId: string, backupId: string): { status: string; reason: string | null; error: string | null };
  restore(siteId: string, backupId: string): { id: string };
  getRestore(siteId: string, restoreId: string): { status: string; reason: string | null; error: string | null };
}

const POLL_MS = 250;
const FINISHED = new Set(['completed', 'partial', 'failed']);

/**
 * The backup a safe update takes before updating, and its restore when putting the saved copy
 * back did not heal the site: ordinary backup and restore jobs (incremental, recorded, logged,
 * in the backups pool), awaited.
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
  async function waitFor(read: () => { status: string; reason: string | null; error: string | null }) {
    const deadline = Date.now() + limitMs;
    for (;;) {
      const row = read();
      if (FINISHED.has(row.status)) return row;
      if (Date.now() > deadline)
        return { status: 'failed', reason: 'timeout', error: `not finished within ${limitMs} ms` };
      await sleep(POLL_MS);
    }
  }
  const describe = (row: { status: string; reason: string | null; error: string | null }) =>
    row.status === 'failed' ? `${row.reason ?? 'failed'}: ${row.error ?? ''}` : undefined;

  return {
    /** A fresh backup of the site; its id when it completed (a `partial` one restores too). */
    async backup(siteId: string): Promise<{ id: string | null; detail?: string }> {
      const { id } = backups.request(siteId, 'pre_update');
      const row = await waitFor(() => backups.get(siteId, id));
      return row.status === 'failed' ? { id: null, detail: describe(row) } : { id, detail: id };
    },
    /** Restores the site from the backup; true when the restore completed. */
    async restore(siteId: string, backupId: string): Promise<{ ok: boolean; detail?: string }> {
      const { id } = backups.restore(siteId, backupId);
      const row = await waitFor(() => backups.getRestore(siteId, id));
      return row.status === 'completed'
        ? { ok: true, detail: `restore ${id} of backup ${backupId}` }
        : { ok: false, detail: describe(row) };
    },
  };
}
