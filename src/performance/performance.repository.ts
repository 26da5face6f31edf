import { and, desc, eq, gte, inArray, isNotNull, isNull, lt, lte, or, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { firstRow, forUpdate, tableFor } from '../db/dialect.js';
import type { StateDatabase, StateDb } from '../db/state-db.js';
import { pgSites, sites as sqliteSites } from '../sites/index.js';
import {
  performanceAudits as pgPerformanceAudits,
  performanceSettings as pgPerformanceSettings,
} from './performance.pg-table.js';
import {
  performanceAudits as sqlitePerformanceAudits,
  performanceSettings as sqlitePerformanceSettings,
  type AuditRow,
  type FormFactor,
  type NewAuditRow,
  type PerformanceSettingsRow,
} from './performance.table.js';

export interface HistoryFilter {
  siteId: string;
  formFactor?: FormFactor;
  from?: Date;
  to?: Date;
  /** Newest first: ids below this one. */
  before?: string;
  limit: number;
}

/** An audit's statuses before it ends: one of a site and form factor at a time. */
const UNFINISHED = ['queued', 'running'] as const;

/**
 * An audit of the site and form factor is already queued or running (`audit`): `insertWithJob` threw it,
 * so the job runner's transaction wrote neither the new audit nor its job row.
 */
export class AuditPendingError extends Error {
  override name = 'AuditPendingError';
  constructor(readonly audit: AuditRow) {
    super(`audit ${audit.id} of ${audit.siteId} (${audit.formFactor}) is ${audit.status}`);
  }
}

/** What a PostgreSQL process cannot do yet: a statement of the job runner's own transaction, SQLite's for now. */
const runnerOnly = (what: string) =>
  new Error(
    `${what} is a statement of the job runner's SQLite transaction: on PostgreSQL once the runner passes its transaction to its kinds (issue 34)`,
  );

/**
 * The performance audits and each site's audit settings on either dialect (issue 34,
 * docs/design/cluster-state.md): one async body on drizzle's common query surface, every statement through
 * the state database. What decides a write is the write's own condition: an audit starts only while queued
 * (`start`), a scheduled slot is recorded once (`claimSlot`), a settings patch changes only its fields.
 *
 * An audit's row written with its job (`insertWithJob`) takes the job store's transaction on PostgreSQL, and is
 * synchronous inside the runner's on SQLite. The kind's hooks (`inHook`) are synchronous, on SQLite only, until
 * the runner's hooks are async; on PostgreSQL they throw, naming issue 34.
 */
export function createPerformanceRepository(state: StateDatabase) {
  const audits = tableFor(state.dialect, { sqlite: sqlitePerformanceAudits, postgres: pgPerformanceAudits });
  const settings = tableFor(state.dialect, { sqlite: sqlitePerformanceSettings, postgres: pgPerformanceSettings });
  const sites = tableFor(state.dialect, { sqlite: sqliteSites, postgres: pgSites });
  const run = state.run.bind(state);
  const inRunner = state.sqliteDb && runnerWrites(state.sqliteDb);

  const pendingOf = (row: NewAuditRow) =>
    and(eq(audits.siteId, row.siteId), eq(audits.formFactor, row.formFactor), inArray(audits.status, [...UNFINISHED]));
  async function insertUnlessPendingOn(tx: StateDb, row: NewAuditRow): Promise<AuditRow> {
    await forUpdate(state.dialect, tx.select({ id: sites.id }).from(sites).where(eq(sites.id, row.siteId)));
    const [pending] = await tx.select().from(audits).where(pendingOf(row)).limit(1);
    if (pending) throw new AuditPendingError(pending);
    const [written] = await tx.insert(audits).values(row).returning();
    return written!;
  }

  const completedOf = (siteId: string, formFactor: FormFactor) =>
    and(eq(audits.siteId, siteId), eq(audits.formFactor, formFactor), eq(audits.status, 'completed'));

  return {
    /**
     * A new audit, `queued`, written in the job runner's transaction with its job row (`jobs.submit(job, own)`,
     * an `OwnRow`): on the transaction `tx` the job store gives it (PostgreSQL), else synchronous, on SQLite.
     * Throws `AuditPendingError` when an audit of the site and form factor is queued or running, so that the
     * transaction writes neither row: one audit of each at a time, whoever asks at once. Given `tx`, the site's
     * row is locked first (`for update`): two processes' transactions take turns rather than both finding none.
     */
    insertWithJob(row: NewAuditRow, tx?: StateDb): AuditRow | Promise<AuditRow> {
      if (tx) return insertUnlessPendingOn(tx, row);
      if (!inRunner) throw runnerOnly('an audit written with its job');
      return inRunner.insertUnlessPending(row);
    },

    /**
     * Fails a queued or running audit as `interrupted`, and answers it as written; undefined when it had ended (or
     * is gone). `tx`: in that transaction (a queued audit cancelled in the job store's, with its job row).
     */
    interrupt: (id: string, at: Date, message: string, tx?: StateDb): Promise<AuditRow | undefined> =>
      run(
        (db) =>
          db
            .update(audits)
            .set(interrupted(at, message))
            .where(and(eq(audits.id, id), inArray(audits.status, [...UNFINISHED])))
            .returning()
            .then(firstRow),
        tx,
      ),

    /** The same, inside the job runner's synchronous SQLite transaction (a queued audit cancelled with its job row). */
    inHook: {
      interrupt(id: string, at: Date, message: string): AuditRow | undefined {
        if (!inRunner) throw runnerOnly('an audit interrupted with its job');
        return inRunner.interrupt(id, at, message);
      },
    },

    /** A row as given (tests: an audit as an earlier daemon left it). */
    insert: (row: NewAuditRow): Promise<AuditRow> =>
      run((db) =>
        db
          .insert(audits)
          .values(row)
          .returning()
          .then((rows) => rows[0]!),
      ),

    update: (id: string, changes: Partial<NewAuditRow>): Promise<AuditRow | undefined> =>
      run((db) => db.update(audits).set(changes).where(eq(audits.id, id)).returning().then(firstRow)),

    /** Starts a queued audit (`running` since `at`), and answers it as written; undefined when it is not queued (or gone). */
    start: (id: string, at: Date): Promise<AuditRow | undefined> =>
      run((db) =>
        db
          .update(audits)
          .set({ status: 'running', startedAt: at })
          .where(and(eq(audits.id, id), eq(audits.status, 'queued')))
          .returning()
          .then(firstRow),
      ),

    findById: (id: string): Promise<AuditRow | undefined> =>
      run((db) => db.select().from(audits).where(eq(audits.id, id)).then(firstRow)),

    /** Audits of a site, newest first. */
    history: ({ siteId, formFactor, from, to, before, limit }: HistoryFilter): Promise<AuditRow[]> => {
      const conditions: SQL[] = [eq(audits.siteId, siteId)];
      if (formFactor) conditions.push(eq(audits.formFactor, formFactor));
      if (from) conditions.push(gte(audits.queuedAt, from));
      if (to) conditions.push(lte(audits.queuedAt, to));
      if (before) conditions.push(lt(audits.id, before));
      return run((db) =>
        db
          .select()
          .from(audits)
          .where(and(...conditions))
          .orderBy(desc(audits.id))
          .limit(limit),
      );
    },

    latestCompleted: (siteId: string, formFactor: FormFactor): Promise<AuditRow | undefined> =>
      run((db) =>
        db
          .select()
          .from(audits)
          .where(completedOf(siteId, formFactor))
          .orderBy(desc(audits.id))
          .limit(1)
          .then(firstRow),
      ),

    /** The completed audits before `beforeId` of the same site and form factor, newest first. */
    recentCompleted: (siteId: string, formFactor: FormFactor, beforeId: string, limit: number): Promise<AuditRow[]> =>
      run((db) =>
        db
          .select()
          .from(audits)
          .where(and(completedOf(siteId, formFactor), lt(audits.id, beforeId)))
          .orderBy(desc(audits.id))
          .limit(limit),
      ),

    /** Audits with a report on disk that finished before `finishedBefore`. */
    reportsFinishedBefore: (finishedBefore: Date): Promise<AuditRow[]> =>
      run((db) =>
        db
          .select()
          .from(audits)
          .where(and(isNotNull(audits.reportBytes), lt(audits.finishedAt, finishedBefore))),
      ),

    /** Audits of the site whose report file is theirs to keep: stored (`reportBytes`), or still queued or running. */
    auditIdsOfSite: async (siteId: string): Promise<Set<string>> => {
      const rows = await run((db) =>
        db
          .select({ id: audits.id })
          .from(audits)
          .where(
            and(eq(audits.siteId, siteId), or(isNotNull(audits.reportBytes), inArray(audits.status, [...UNFINISHED]))),
          ),
      );
      return new Set(rows.map((row) => row.id));
    },

    readSettings: (siteId: string): Promise<PerformanceSettingsRow | undefined> =>
      run((db) => db.select().from(settings).where(eq(settings.siteId, siteId)).then(firstRow)),

    /**
     * A settings patch: `row` when the site has none yet (the defaults with the patch), else only the columns in
     * `changes` written: one statement, so that two patches at once each keep the other's fields.
     */
    patchSettings: async (
      row: PerformanceSettingsRow,
      changes: Partial<Omit<PerformanceSettingsRow, 'siteId' | 'lastScheduledAt'>>,
    ): Promise<void> => {
      await run((db) => {
        const insert = db.insert(settings).values(row);
        return Object.keys(changes).length === 0
          ? insert.onConflictDoNothing({ target: settings.siteId })
          : insert.onConflictDoUpdate({ target: settings.siteId, set: changes });
      });
    },

    /**
     * Records `slot` as the site's last scheduled one, unless it is already (another tick took it): whether this
     * one did. `row`: the site's settings when it has no row yet (the defaults); a row it has keeps its settings.
     */
    claimSlot: async (row: PerformanceSettingsRow & { lastScheduledAt: Date }): Promise<boolean> => {
      const claimed = await run((db) =>
        db
          .insert(settings)
          .values(row)
          .onConflictDoUpdate({
            target: settings.siteId,
            set: { lastScheduledAt: row.lastScheduledAt },
            setWhere: or(isNull(settings.lastScheduledAt), lt(settings.lastScheduledAt, row.lastScheduledAt)),
          })
          .returning({ siteId: settings.siteId }),
      );
      return claimed.length > 0;
    },

    /** Connected sites with their settings row, if any: what the scheduler looks at. */
    connectedSites: (): Promise<{ id: string; url: string; settings: PerformanceSettingsRow | null }[]> =>
      run((db) =>
        db
          .select({ id: sites.id, url: sites.url, settings })
          .from(sites)
          .leftJoin(settings, eq(settings.siteId, sites.id))
          .where(eq(sites.state, 'connected')),
      ),
  };
}

/** The writes the job runner's SQLite transaction takes, synchronous statements on its connection. */
function runnerWrites(db: Db) {
  const audits = sqlitePerformanceAudits;
  const find = (id: string): AuditRow | undefined => db.select().from(audits).where(eq(audits.id, id)).get();
  return {
    find,

    insertUnlessPending(row: NewAuditRow): AuditRow {
      const pending = db
        .select()
        .from(audits)
        .where(
          and(
            eq(audits.siteId, row.siteId),
            eq(audits.formFactor, row.formFactor),
            inArray(audits.status, [...UNFINISHED]),
          ),
        )
        .get();
      if (pending) throw new AuditPendingError(pending);
      return db.insert(audits).values(row).returning().get();
    },

    interrupt: (id: string, at: Date, message: string): AuditRow | undefined =>
      db
        .update(audits)
        .set(interrupted(at, message))
        .where(and(eq(audits.id, id), inArray(audits.status, [...UNFINISHED])))
        .returning()
        .get(),
  };
}

/** An audit's row as an interruption leaves it. */
const interrupted = (at: Date, message: string) =>
  ({ status: 'failed', finishedAt: at, failureReason: 'interrupted', failureMessage: message }) as const;

export type PerformanceRepository = ReturnType<typeof createPerformanceRepository>;
