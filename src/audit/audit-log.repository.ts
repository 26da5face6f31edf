import type Database from 'better-sqlite3';
import { and, asc, desc, eq, gt, gte, lt, or, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { auditLog, type AuditLogRow, type AuditOutcome } from './audit-log.table.js';

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

function conditions({ siteId, actorId, since, until, outcome }: AuditLogFilter): (SQL | undefined)[] {
  return [
    siteId === undefined ? undefined : eq(auditLog.siteId, siteId),
    actorId === undefined ? undefined : or(eq(auditLog.actorId, actorId), eq(auditLog.userId, actorId)),
    since === undefined ? undefined : gte(auditLog.at, since),
    until === undefined ? undefined : lt(auditLog.at, until),
    outcome === undefined ? undefined : eq(auditLog.outcome, outcome),
  ];
}

export function createAuditLogRepository({ db }: { db: Db }) {
  const client = (db as Db & { $client: Database.Database }).$client;
  // One prepared insert, run on every state-changing request: building a drizzle query each time
  // would cost several times what SQLite spends on the row.
  const insert = client.prepare(
    `INSERT INTO audit_log (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((column) => `@${column}`).join(', ')})`,
  );
  // The prune: declare the cutoff to the DELETE trigger, delete below it, close the gate again.
  const prune = client.transaction((cutoff: number): number => {
    client.prepare('INSERT INTO audit_log_prune_gate (cutoff) VALUES (?)').run(cutoff);
    const deleted = client.prepare('DELETE FROM audit_log WHERE at < ?').run(cutoff).changes;
    client.prepare('DELETE FROM audit_log_prune_gate').run();
    return deleted;
  });
  return {
    insert(entry: AuditLogEntry): void {
      insert.run({
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
      });
    },

    /** Newest first; `before`: the cursor (an id). */
    list(filter: AuditLogFilter & { before?: string; limit: number }): AuditLogRow[] {
      return db
        .select()
        .from(auditLog)
        .where(and(...conditions(filter), filter.before === undefined ? undefined : lt(auditLog.id, filter.before)))
        .orderBy(desc(auditLog.id))
        .limit(filter.limit)
        .all();
    },

    /** Oldest first, from after `after` (an id): the export's pages. */
    listForward(filter: AuditLogFilter & { after?: string; limit: number }): AuditLogRow[] {
      return db
        .select()
        .from(auditLog)
        .where(and(...conditions(filter), filter.after === undefined ? undefined : gt(auditLog.id, filter.after)))
        .orderBy(asc(auditLog.id))
        .limit(filter.limit)
        .all();
    },

    /** Removes the entries recorded before `cutoff`; how many. The only delete the table's trigger lets through. */
    pruneBefore: (cutoff: Date): number => prune(cutoff.getTime()),
  };
}

export type AuditLogRepository = ReturnType<typeof createAuditLogRepository>;
