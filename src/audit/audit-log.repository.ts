import { and, asc, desc, eq, gt, gte, lt, or, sql, type SQL } from 'drizzle-orm';
import { rowsChanged, tableFor } from '../db/dialect.js';
import type { StateDatabase } from '../db/state-db.js';
import { auditLog as pgAuditLog } from './audit-log.pg-table.js';
import { auditLog as sqliteAuditLog, type AuditLogRow, type AuditOutcome } from './audit-log.table.js';

/** A row as recorded (its id and time made by the service). */
export type AuditLogEntry = AuditLogRow;

export interface AuditLogFilter {
  siteId?: string;
  /** A token id or a user id: the entries of that token, or of that user (signed in or through their tokens). */
  actorId?: string;
  since?: Date;
  until?: Date;
  outcome?: AuditOutcome;
}

const COLUMNS = [
  'id',
  'at',
  'source',
  'actor_kind',
  'actor_id',
  'actor_name',
  'user_id',
  'address',
  'method',
  'action',
  'site_id',
  'target_kind',
  'target_id',
  'status',
  'outcome',
  'problem',
] as const;

/** The transaction-local setting in which the PostgreSQL prune declares its cutoff (ISO) to the DELETE trigger. */
const PRUNE_SETTING = 'sitewarden.audit_prune';

/**
 * The `audit_log` rows on either dialect (issue 34, docs/design/cluster-state.md), every statement
 * through the state database. Append-only on both: the prune is the only delete either dialect's
 * trigger lets through.
 */
export function createAuditLogRepository(state: StateDatabase) {
  const auditLog = tableFor(state.dialect, { sqlite: sqliteAuditLog, postgres: pgAuditLog });

  function conditions({ siteId, actorId, since, until, outcome }: AuditLogFilter): (SQL | undefined)[] {
    return [
      siteId === undefined ? undefined : eq(auditLog.siteId, siteId),
      actorId === undefined ? undefined : or(eq(auditLog.actorId, actorId), eq(auditLog.userId, actorId)),
      since === undefined ? undefined : gte(auditLog.at, since),
      until === undefined ? undefined : lt(auditLog.at, until),
      outcome === undefined ? undefined : eq(auditLog.outcome, outcome),
    ];
  }

  // SQLite: one prepared insert, run on every state-changing request (building a drizzle query each
  // time would cost several times what SQLite spends on the row), and the prune as one better-sqlite3
  // transaction: declare the cutoff to the DELETE trigger in `audit_log_prune_gate`, delete below it,
  // close the gate again.
  const client = state.sqlite;
  const prepared = client && {
    insert: client.prepare(
      `INSERT INTO audit_log (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((column) => `@${column}`).join(', ')})`,
    ),
    prune: client.transaction((cutoff: number): number => {
      client.prepare('INSERT INTO audit_log_prune_gate (cutoff) VALUES (?)').run(cutoff);
      const deleted = client.prepare('DELETE FROM audit_log WHERE at < ?').run(cutoff).changes;
      client.prepare('DELETE FROM audit_log_prune_gate').run();
      return deleted;
    }),
  };

  return {
    insert: async (entry: AuditLogEntry): Promise<void> => {
      if (!prepared) {
        await state.run((db) => db.insert(auditLog).values(entry));
        return;
      }
      await state.run(() =>
        prepared.insert.run({
          id: entry.id,
          at: entry.at.getTime(),
          source: entry.source,
          actor_kind: entry.actorKind,
          actor_id: entry.actorId,
          actor_name: entry.actorName,
          user_id: entry.userId,
          address: entry.address,
          method: entry.method,
          action: entry.action,
          site_id: entry.siteId,
          target_kind: entry.targetKind,
          target_id: entry.targetId,
          status: entry.status,
          outcome: entry.outcome,
          problem: entry.problem,
        }),
      );
    },

    /** Newest first; `before`: the cursor (an id). */
    list: (filter: AuditLogFilter & { before?: string; limit: number }): Promise<AuditLogRow[]> =>
      state.run((db) =>
        db
          .select()
          .from(auditLog)
          .where(and(...conditions(filter), filter.before === undefined ? undefined : lt(auditLog.id, filter.before)))
          .orderBy(desc(auditLog.id))
          .limit(filter.limit),
      ),

    /** Oldest first, from after `after` (an id): the export's pages. */
    listForward: (filter: AuditLogFilter & { after?: string; limit: number }): Promise<AuditLogRow[]> =>
      state.run((db) =>
        db
          .select()
          .from(auditLog)
          .where(and(...conditions(filter), filter.after === undefined ? undefined : gt(auditLog.id, filter.after)))
          .orderBy(asc(auditLog.id))
          .limit(filter.limit),
      ),

    /**
     * Removes the entries recorded before `cutoff`; how many. The only delete the table's trigger lets
     * through: on PostgreSQL the cutoff is declared in a setting local to the delete's transaction
     * (`set_config(…, true)`), gone when it ends, as SQLite's gate row is deleted before its commit.
     */
    pruneBefore: (cutoff: Date): Promise<number> =>
      prepared
        ? state.run(() => prepared.prune(cutoff.getTime()))
        : state.transaction(async (tx) => {
            await tx.execute(sql`select set_config(${PRUNE_SETTING}, ${cutoff.toISOString()}, true)`);
            return rowsChanged(await tx.delete(auditLog).where(lt(auditLog.at, cutoff)));
          }),
  };
}

export type AuditLogRepository = ReturnType<typeof createAuditLogRepository>;
