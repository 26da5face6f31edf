import { and, desc, eq, inArray, lt } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { backups, restores, type BackupRow, type NewBackupRow, type NewRestoreRow, type RestoreRow } from './backups.table.js';

export function createBackupsRepository({ db }: { db: Db }) {
  return {
    insertBackup: (row: NewBackupRow): BackupRow => db.insert(backups).values(row).returning().get(),
    updateBackup: (id: string, changes: Partial<NewBackupRow>): BackupRow | undefined => db.update(backups).set(changes).where(eq(backups.id, id)).returning().get(),
    findBackup: (id: string): BackupRow | undefined => db.select().from(backups).where(eq(backups.id, id)).get(),
    deleteBackup: (id: string): boolean => db.delete(backups).where(eq(backups.id, id)).run().changes > 0,

    /** Newest first; `before` is the previous page's last id. */
    listBackups({ siteId, limit, before }: { siteId: string; limit: number; before?: string }): BackupRow[] {
      return db
        .select()
        .from(backups)
        .where(and(eq(backups.siteId, siteId), before ? lt(backups.id, before) : undefined))
        .orderBy(desc(backups.id))
        .limit(limit)
        .all();
    },

    completedBackups: (siteId?: string): BackupRow[] =>
      db
        .select()
        .from(backups)
        .where(and(eq(backups.status, 'completed'), siteId ? eq(backups.siteId, siteId) : undefined))
        .orderBy(desc(backups.id))
        .all(),

    /** Every backup of the site, newest first (retention). */
    allBackups: (siteId: string): BackupRow[] => db.select().from(backups).where(eq(backups.siteId, siteId)).orderBy(desc(backups.id)).all(),

    insertRestore: (row: NewRestoreRow): RestoreRow => db.insert(restores).values(row).returning().get(),
    updateRestore: (id: string, changes: Partial<NewRestoreRow>): RestoreRow | undefined => db.update(restores).set(changes).where(eq(restores.id, id)).returning().get(),
    findRestore: (id: string): RestoreRow | undefined => db.select().from(restores).where(eq(restores.id, id)).get(),

    /** A backup or restore of the site that is queued or running. */
    activeJob(siteId: string): { kind: 'backup' | 'restore'; id: string } | undefined {
      const backup = db.select({ id: backups.id }).from(backups).where(and(eq(backups.siteId, siteId), inArray(backups.status, ['queued', 'running']))).get();
      if (backup) return { kind: 'backup', id: backup.id };
      const restore = db.select({ id: restores.id }).from(restores).where(and(eq(restores.siteId, siteId), inArray(restores.status, ['queued', 'running']))).get();
      return restore ? { kind: 'restore', id: restore.id } : undefined;
    },

    /** Jobs a previous process left unfinished (it was killed or crashed). */
    failUnfinished(finishedAt: Date): { backups: BackupRow[]; restores: RestoreRow[] } {
      const changes = { status: 'failed' as const, reason: 'interrupted', error: 'the daemon stopped while this job was unfinished', finishedAt };
      return db.transaction((tx) => ({
        backups: tx.update(backups).set(changes).where(inArray(backups.status, ['queued', 'running'])).returning().all(),
        restores: tx.update(restores).set(changes).where(inArray(restores.status, ['queued', 'running'])).returning().all(),
      }));
    },
  };
}

export type BackupsRepository = ReturnType<typeof createBackupsRepository>;
