import { alias } from 'drizzle-orm/sqlite-core';
import { and, desc, eq, inArray, isNull, lt, ne, notExists, notInArray, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { siteTags } from '../sites/index.js';
import {
  backupSettings,
  backups,
  backupTagRetention,
  restores,
  type BackupRow,
  type BackupSettingsRow,
  type BackupTagRetentionRow,
  type NewBackupRow,
  type NewRestoreRow,
  type RestoreRow,
} from './backups.table.js';

const retries = alias(backups, 'retries');

export function createBackupsRepository({ db }: { db: Db }) {
  return {
    insertBackup: (row: NewBackupRow): BackupRow => db.insert(backups).values(row).returning().get(),
    updateBackup: (id: string, changes: Partial<NewBackupRow>): BackupRow | undefined =>
      db.update(backups).set(changes).where(eq(backups.id, id)).returning().get(),
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

    /** Backups the local store holds whole: `completed` ones and `partial` ones (an offsite copy failed). */
    completedBackups: (siteId?: string): BackupRow[] =>
      db
        .select()
        .from(backups)
        .where(and(inArray(backups.status, ['completed', 'partial']), siteId ? eq(backups.siteId, siteId) : undefined))
        .orderBy(desc(backups.id))
        .all(),

    /** Every backup of the site, newest first (retention). */
    allBackups: (siteId: string): BackupRow[] =>
      db.select().from(backups).where(eq(backups.siteId, siteId)).orderBy(desc(backups.id)).all(),

    insertRestore: (row: NewRestoreRow): RestoreRow => db.insert(restores).values(row).returning().get(),
    updateRestore: (id: string, changes: Partial<NewRestoreRow>): RestoreRow | undefined =>
      db.update(restores).set(changes).where(eq(restores.id, id)).returning().get(),
    findRestore: (id: string): RestoreRow | undefined => db.select().from(restores).where(eq(restores.id, id)).get(),

    /** A backup or restore of the site that is queued or running. */
    activeJob(siteId: string): { kind: 'backup' | 'restore'; id: string } | undefined {
      const backup = db
        .select({ id: backups.id })
        .from(backups)
        .where(and(eq(backups.siteId, siteId), inArray(backups.status, ['queued', 'running'])))
        .get();
      if (backup) return { kind: 'backup', id: backup.id };
      const restore = db
        .select({ id: restores.id })
        .from(restores)
        .where(and(eq(restores.siteId, siteId), inArray(restores.status, ['queued', 'running'])))
        .get();
      return restore ? { kind: 'restore', id: restore.id } : undefined;
    },

    /** Jobs a previous process left in `status`, oldest first (start-up recovery). */
    backupsWithStatus: (status: 'queued' | 'running'): BackupRow[] =>
      db.select().from(backups).where(eq(backups.status, status)).orderBy(backups.id).all(),
    restoresWithStatus: (status: 'queued' | 'running'): RestoreRow[] =>
      db.select().from(restores).where(eq(restores.status, status)).orderBy(restores.id).all(),

    /** Interrupted backups that nothing has retried yet and that are not retries themselves, oldest first. */
    unretriedInterrupted: (): BackupRow[] =>
      db
        .select()
        .from(backups)
        .where(
          and(
            eq(backups.status, 'failed'),
            eq(backups.reason, 'interrupted'),
            isNull(backups.retryOf),
            // Taken for a restore or a safe update: that job decides, a retry would come too late.
            notInArray(backups.kind, ['pre_restore', 'pre_update']),
            notExists(db.select({ id: retries.id }).from(retries).where(eq(retries.retryOf, backups.id))),
          ),
        )
        .orderBy(backups.id)
        .all(),

    /**
     * What the schedule needs of every site in three queries rather than three per site: its
     * settings, its newest good and newest failed own (not pre-restore) backup, and whether a job
     * of it is queued or running.
     */
    scheduleFacts(): {
      settings: Map<string, BackupSettingsRow>;
      history: Map<string, ScheduleHistory>;
      busy: Set<string>;
    } {
      const settings = new Map(
        db
          .select()
          .from(backupSettings)
          .all()
          .map((row) => [row.siteId, row]),
      );
      const history = new Map(
        db
          .select({
            siteId: backups.siteId,
            lastGoodAt: sql<number | null>`max(case when ${backups.status} != 'failed' then ${backups.createdAt} end)`,
            lastFailedAt: sql<number | null>`max(case when ${backups.status} = 'failed' then ${backups.createdAt} end)`,
          })
          .from(backups)
          .where(ne(backups.kind, 'pre_restore'))
          .groupBy(backups.siteId)
          .all()
          .map((row) => [
            row.siteId,
            {
              lastGoodAt: row.lastGoodAt === null ? null : new Date(row.lastGoodAt),
              lastFailedAt: row.lastFailedAt === null ? null : new Date(row.lastFailedAt),
            },
          ]),
      );
      const active = ['queued', 'running'] as const;
      const busy = new Set(
        [
          ...db.selectDistinct({ siteId: backups.siteId }).from(backups).where(inArray(backups.status, active)).all(),
          ...db
            .selectDistinct({ siteId: restores.siteId })
            .from(restores)
            .where(inArray(restores.status, active))
            .all(),
        ].map((row) => row.siteId),
      );
      return { settings, history, busy };
    },

    readSettings: (siteId: string): BackupSettingsRow | undefined =>
      db.select().from(backupSettings).where(eq(backupSettings.siteId, siteId)).get(),
    writeSettings(row: BackupSettingsRow): BackupSettingsRow {
      const { siteId: _siteId, ...changes } = row;
      return db
        .insert(backupSettings)
        .values(row)
        .onConflictDoUpdate({ target: backupSettings.siteId, set: changes })
        .returning()
        .get();
    },

    /** The retention of each of the site's tags that has one. */
    tagRetentionOf: (siteId: string): BackupTagRetentionRow[] =>
      db
        .select({ retention: backupTagRetention })
        .from(siteTags)
        .innerJoin(backupTagRetention, eq(backupTagRetention.tag, siteTags.tag))
        .where(eq(siteTags.siteId, siteId))
        .all()
        .map((row) => row.retention),
    listTagRetention: (): BackupTagRetentionRow[] =>
      db.select().from(backupTagRetention).orderBy(backupTagRetention.tag).all(),
    writeTagRetention(row: BackupTagRetentionRow): BackupTagRetentionRow {
      const { tag: _tag, ...changes } = row;
      return db
        .insert(backupTagRetention)
        .values(row)
        .onConflictDoUpdate({ target: backupTagRetention.tag, set: changes })
        .returning()
        .get();
    },
    deleteTagRetention: (tag: string): boolean =>
      db.delete(backupTagRetention).where(eq(backupTagRetention.tag, tag)).run().changes > 0,
  };
}

/** A site's newest good and newest failed own backup, by creation time. */
export interface ScheduleHistory {
  lastGoodAt: Date | null;
  lastFailedAt: Date | null;
}

export type BackupsRepository = ReturnType<typeof createBackupsRepository>;
