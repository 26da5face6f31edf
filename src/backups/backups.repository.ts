import { and, desc, eq, inArray, isNull, lt, ne, notExists, notInArray, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Db } from '../db/database.js';
import { firstRow, forUpdate, rowsChanged, tableFor } from '../db/dialect.js';
import type { StateDatabase, StateDb } from '../db/state-db.js';
import { pgSites, pgSiteTags, sites as sqliteSites, siteTags as sqliteSiteTags } from '../sites/index.js';
import {
  backups as pgBackups,
  backupSettings as pgBackupSettings,
  backupTagRetention as pgBackupTagRetention,
  restores as pgRestores,
} from './backups.pg-table.js';
import {
  backups as sqliteBackups,
  backupSettings as sqliteBackupSettings,
  backupTagRetention as sqliteBackupTagRetention,
  restores as sqliteRestores,
  type BackupRow,
  type BackupSettingsRow,
  type BackupStatus,
  type BackupTagRetentionRow,
  type JobStatus,
  type NewBackupRow,
  type NewRestoreRow,
  type RestoreRow,
} from './backups.table.js';

/** A backup or restore still to end: what makes its site busy (one job per site at a time). */
const ACTIVE = ['queued', 'running'] as const;
/** The statuses of a backup that ended, which retention may delete. */
const ENDED: readonly BackupStatus[] = ['completed', 'partial', 'failed'];

/** A site's own backup settings as a patch writes them: a field left out keeps its value, null is the default. */
export type BackupSettingsPatchRow = Partial<Omit<BackupSettingsRow, 'siteId' | 'updatedAt'>>;

/**
 * The backups feature's rows on either dialect (issue 34, docs/design/cluster-state.md): one async body on
 * drizzle's common query surface, every statement through the state database. A write that must find its
 * row in a status says so (`whileIn`), checked by the statement itself, so that a run's end never lands on
 * a row another writer ended (an interrupted run settled by recovery, a cancel).
 *
 * `inHook` is the statements the job runner's synchronous callbacks make (`own`, `cancelQueued`,
 * `recover.running` and `recover.queued`): synchronous SQLite statements, as the runner's contract wants
 * them, inside its transaction where it has one. On PostgreSQL they throw until the runner passes its
 * transaction to them (issue 34, "The runner's move").
 */
export function createBackupsRepository(state: StateDatabase) {
  const backups = tableFor(state.dialect, { sqlite: sqliteBackups, postgres: pgBackups });
  const restores = tableFor(state.dialect, { sqlite: sqliteRestores, postgres: pgRestores });
  const backupSettings = tableFor(state.dialect, { sqlite: sqliteBackupSettings, postgres: pgBackupSettings });
  const backupTagRetention = tableFor(state.dialect, {
    sqlite: sqliteBackupTagRetention,
    postgres: pgBackupTagRetention,
  });
  const siteTags = tableFor(state.dialect, { sqlite: sqliteSiteTags, postgres: pgSiteTags });
  const sites = tableFor(state.dialect, { sqlite: sqliteSites, postgres: pgSites });
  // drizzle's alias is one proxy in both dialects' builders: the retries of a backup, in a subquery.
  const retries = alias(backups, 'retries');
  const run = state.run.bind(state);

  return {
    insertBackup: (row: NewBackupRow): Promise<BackupRow> =>
      run((db) =>
        db
          .insert(backups)
          .values(row)
          .returning()
          .then((rows) => rows[0]!),
      ),
    /**
     * Writes `changes` to the backup, while it is in one of `whileIn` when given; the row as written, or undefined.
     * `tx`: in that transaction (a queued backup cancelled in the job store's, with its job row).
     */
    updateBackup: (
      id: string,
      changes: Partial<NewBackupRow>,
      whileIn?: readonly BackupStatus[],
      tx?: StateDb,
    ): Promise<BackupRow | undefined> =>
      run(
        (db) =>
          db
            .update(backups)
            .set(changes)
            .where(and(eq(backups.id, id), whileIn && inArray(backups.status, [...whileIn])))
            .returning()
            .then(firstRow),
        tx,
      ),
    findBackup: (id: string): Promise<BackupRow | undefined> =>
      run((db) => db.select().from(backups).where(eq(backups.id, id)).then(firstRow)),
    deleteBackup: async (id: string): Promise<boolean> =>
      rowsChanged(await run((db) => db.delete(backups).where(eq(backups.id, id)))) > 0,

    /**
     * Deletes the backups of `ids` that have ended (a queued or running one stays, whatever was read
     * before), in one statement; the rows deleted. On SQLite a trigger takes each one's job row with it.
     */
    deleteEndedBackups: (ids: readonly string[]): Promise<BackupRow[]> =>
      ids.length === 0
        ? Promise.resolve([])
        : run((db) =>
            db
              .delete(backups)
              .where(and(inArray(backups.id, [...ids]), inArray(backups.status, [...ENDED])))
              .returning(),
          ),

    /** Newest first; `before` is the previous page's last id. */
    listBackups: ({
      siteId,
      limit,
      before,
    }: {
      siteId: string;
      limit: number;
      before?: string;
    }): Promise<BackupRow[]> =>
      run((db) =>
        db
          .select()
          .from(backups)
          .where(and(eq(backups.siteId, siteId), before ? lt(backups.id, before) : undefined))
          .orderBy(desc(backups.id))
          .limit(limit),
      ),

    /** Backups the local store holds whole: `completed` ones and `partial` ones (an offsite copy failed). */
    completedBackups: (siteId?: string): Promise<BackupRow[]> =>
      run((db) =>
        db
          .select()
          .from(backups)
          .where(
            and(inArray(backups.status, ['completed', 'partial']), siteId ? eq(backups.siteId, siteId) : undefined),
          )
          .orderBy(desc(backups.id)),
      ),

    /** Every backup of the site, newest first (retention). */
    allBackups: (siteId: string): Promise<BackupRow[]> =>
      run((db) => db.select().from(backups).where(eq(backups.siteId, siteId)).orderBy(desc(backups.id))),

    insertRestore: (row: NewRestoreRow): Promise<RestoreRow> =>
      run((db) =>
        db
          .insert(restores)
          .values(row)
          .returning()
          .then((rows) => rows[0]!),
      ),
    /** Writes `changes` to the restore, while it is in one of `whileIn` when given (`tx` as `updateBackup`); the row as written, or undefined. */
    updateRestore: (
      id: string,
      changes: Partial<NewRestoreRow>,
      whileIn?: readonly JobStatus[],
      tx?: StateDb,
    ): Promise<RestoreRow | undefined> =>
      run(
        (db) =>
          db
            .update(restores)
            .set(changes)
            .where(and(eq(restores.id, id), whileIn && inArray(restores.status, [...whileIn])))
            .returning()
            .then(firstRow),
        tx,
      ),
    findRestore: (id: string): Promise<RestoreRow | undefined> =>
      run((db) => db.select().from(restores).where(eq(restores.id, id)).then(firstRow)),

    /** A backup or restore of the site that is queued or running. */
    async activeJob(siteId: string): Promise<ActiveJob | undefined> {
      const backup = await run((db) =>
        db
          .select({ id: backups.id })
          .from(backups)
          .where(and(eq(backups.siteId, siteId), inArray(backups.status, ACTIVE)))
          .limit(1)
          .then(firstRow),
      );
      if (backup) return { kind: 'backup', id: backup.id };
      const restore = await run((db) =>
        db
          .select({ id: restores.id })
          .from(restores)
          .where(and(eq(restores.siteId, siteId), inArray(restores.status, ACTIVE)))
          .limit(1)
          .then(firstRow),
      );
      return restore ? { kind: 'restore', id: restore.id } : undefined;
    },

    /** Interrupted backups that nothing has retried yet and that are not retries themselves, oldest first. */
    unretriedInterrupted: (): Promise<BackupRow[]> =>
      run((db) =>
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
          .orderBy(backups.id),
      ),

    /**
     * What the schedule needs of every site in four queries rather than three per site: its
     * settings, its newest good and newest failed own (not pre-restore) backup, and whether a job
     * of it is queued or running.
     */
    async scheduleFacts(): Promise<{
      settings: Map<string, BackupSettingsRow>;
      history: Map<string, ScheduleHistory>;
      busy: Set<string>;
    }> {
      const settings = new Map((await run((db) => db.select().from(backupSettings))).map((row) => [row.siteId, row]));
      const history = new Map(
        (
          await run((db) =>
            db
              .select({
                siteId: backups.siteId,
                // Read through the column: SQLite's integer and PostgreSQL's timestamptz both answer a Date.
                lastGoodAt:
                  sql<Date | null>`max(case when ${backups.status} != 'failed' then ${backups.createdAt} end)`.mapWith(
                    backups.createdAt,
                  ),
                lastFailedAt:
                  sql<Date | null>`max(case when ${backups.status} = 'failed' then ${backups.createdAt} end)`.mapWith(
                    backups.createdAt,
                  ),
              })
              .from(backups)
              .where(ne(backups.kind, 'pre_restore'))
              .groupBy(backups.siteId),
          )
        ).map(({ siteId, lastGoodAt, lastFailedAt }) => [siteId, { lastGoodAt, lastFailedAt }]),
      );
      const busyBackups = await run((db) =>
        db.selectDistinct({ siteId: backups.siteId }).from(backups).where(inArray(backups.status, ACTIVE)),
      );
      const busyRestores = await run((db) =>
        db.selectDistinct({ siteId: restores.siteId }).from(restores).where(inArray(restores.status, ACTIVE)),
      );
      const busy = new Set([...busyBackups, ...busyRestores].map((row) => row.siteId));
      return { settings, history, busy };
    },

    readSettings: (siteId: string): Promise<BackupSettingsRow | undefined> =>
      run((db) => db.select().from(backupSettings).where(eq(backupSettings.siteId, siteId)).then(firstRow)),
    /**
     * Applies a patch to the site's settings in one statement (the row made with the defaults for what it
     * leaves out, or only its fields written over the row there is), so that two patches of different
     * fields at once both hold. The row as written.
     */
    patchSettings: (siteId: string, patch: BackupSettingsPatchRow, updatedAt: Date): Promise<BackupSettingsRow> =>
      run((db) =>
        db
          .insert(backupSettings)
          .values({ ...patch, siteId, updatedAt })
          .onConflictDoUpdate({ target: backupSettings.siteId, set: { ...patch, updatedAt } })
          .returning()
          .then((rows) => rows[0]!),
      ),

    /** The retention of each of the site's tags that has one. */
    tagRetentionOf: async (siteId: string): Promise<BackupTagRetentionRow[]> =>
      (
        await run((db) =>
          db
            .select({ retention: backupTagRetention })
            .from(siteTags)
            .innerJoin(backupTagRetention, eq(backupTagRetention.tag, siteTags.tag))
            .where(eq(siteTags.siteId, siteId)),
        )
      ).map((row) => row.retention),
    listTagRetention: (): Promise<BackupTagRetentionRow[]> =>
      run((db) => db.select().from(backupTagRetention).orderBy(backupTagRetention.tag)),
    writeTagRetention(row: BackupTagRetentionRow): Promise<BackupTagRetentionRow> {
      const { tag: _tag, ...changes } = row;
      return run((db) =>
        db
          .insert(backupTagRetention)
          .values(row)
          .onConflictDoUpdate({ target: backupTagRetention.tag, set: changes })
          .returning()
          .then((rows) => rows[0]!),
      );
    },
    deleteTagRetention: async (tag: string): Promise<boolean> =>
      rowsChanged(await run((db) => db.delete(backupTagRetention).where(eq(backupTagRetention.tag, tag)))) > 0,

    inHook: state.sqliteDb ? hookStatements(state.sqliteDb) : postgresHooks,

    /**
     * The same rows written in the transaction `tx` the job store gives a job's own row (`OwnRow`, PostgreSQL):
     * the site's claim is read after its row is locked (`for update`), so two processes' requests for one site
     * take turns, and the second finds the first's job.
     */
    withJob: {
      async activeJob(tx: StateDb, siteId: string): Promise<ActiveJob | undefined> {
        await forUpdate(state.dialect, tx.select({ id: sites.id }).from(sites).where(eq(sites.id, siteId)));
        const [backup] = await tx
          .select({ id: backups.id })
          .from(backups)
          .where(and(eq(backups.siteId, siteId), inArray(backups.status, ACTIVE)))
          .limit(1);
        if (backup) return { kind: 'backup', id: backup.id };
        const [restore] = await tx
          .select({ id: restores.id })
          .from(restores)
          .where(and(eq(restores.siteId, siteId), inArray(restores.status, ACTIVE)))
          .limit(1);
        return restore && { kind: 'restore', id: restore.id };
      },
      insertBackup: async (tx: StateDb, row: NewBackupRow): Promise<BackupRow> =>
        (await tx.insert(backups).values(row).returning())[0]!,
      insertRestore: async (tx: StateDb, row: NewRestoreRow): Promise<RestoreRow> =>
        (await tx.insert(restores).values(row).returning())[0]!,
    },
  };
}

/** A backup or restore of a site that is queued or running. */
export interface ActiveJob {
  kind: 'backup' | 'restore';
  id: string;
}

/** A site's newest good and newest failed own backup, by creation time. */
export interface ScheduleHistory {
  lastGoodAt: Date | null;
  lastFailedAt: Date | null;
}

/**
 * The statements made inside the job runner's synchronous SQLite transaction (a job's own row, a queued job's
 * cancel), at once on the connection, not through `state.run`. A read and the write it decides are atomic
 * there: the transaction holds the connection, and nothing awaits between them.
 */
function hookStatements(db: Db) {
  const backups = sqliteBackups;
  const restores = sqliteRestores;
  return {
    /** A backup or restore of the site that is queued or running (read in the transaction that writes the next). */
    activeJob(siteId: string): ActiveJob | undefined {
      const backup = db
        .select({ id: backups.id })
        .from(backups)
        .where(and(eq(backups.siteId, siteId), inArray(backups.status, ACTIVE)))
        .get();
      if (backup) return { kind: 'backup', id: backup.id };
      const restore = db
        .select({ id: restores.id })
        .from(restores)
        .where(and(eq(restores.siteId, siteId), inArray(restores.status, ACTIVE)))
        .get();
      return restore ? { kind: 'restore', id: restore.id } : undefined;
    },
    /** The backup's row written with its job row (`own` of the runner's `submit`, `create` or `record`). */
    insertBackup: (row: NewBackupRow): BackupRow => db.insert(backups).values(row).returning().get(),
    /** The restore's row written with its job row (`own` of the runner's `submit`). */
    insertRestore: (row: NewRestoreRow): RestoreRow => db.insert(restores).values(row).returning().get(),
    updateBackup: (
      id: string,
      changes: Partial<NewBackupRow>,
      whileIn: readonly BackupStatus[],
    ): BackupRow | undefined =>
      db
        .update(backups)
        .set(changes)
        .where(and(eq(backups.id, id), inArray(backups.status, [...whileIn])))
        .returning()
        .get(),
    updateRestore: (
      id: string,
      changes: Partial<NewRestoreRow>,
      whileIn: readonly JobStatus[],
    ): RestoreRow | undefined =>
      db
        .update(restores)
        .set(changes)
        .where(and(eq(restores.id, id), inArray(restores.status, [...whileIn])))
        .returning()
        .get(),
  };
}

type HookStatements = ReturnType<typeof hookStatements>;

const notYetOnPostgres = (): never => {
  throw new Error(
    'these are the statements of the job runner’s SQLite transaction: on PostgreSQL the job store gives its transaction, and the rows are written there (`withJob`, or the method given `tx`)',
  );
};

const postgresHooks: HookStatements = {
  activeJob: notYetOnPostgres,
  insertBackup: notYetOnPostgres,
  insertRestore: notYetOnPostgres,
  updateBackup: notYetOnPostgres,
  updateRestore: notYetOnPostgres,
};

export type BackupsRepository = ReturnType<typeof createBackupsRepository>;
