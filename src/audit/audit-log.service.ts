import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import type { Events, PublishedEvent } from '../shared/event-bus.js';
import { problemType } from '../shared/errors.js';
import { createId } from '../shared/ids.js';
import { DEFAULT_AUDIT_LOG_CONFIG, type AuditLogConfig } from './audit-log.config.js';
import type { AuditLogFilter, AuditLogRepository } from './audit-log.repository.js';
import type { AuditLogRow, AuditOutcome, AuditSource } from './audit-log.table.js';

/** What one entry says; the service gives it its id and time. */
export interface AuditRecord {
  source: AuditSource;
  actor: { kind: 'token' | 'user'; id: string; name: string | null } | null;
  /** For a failed sign-in, the name tried (never the password). */
  attemptedName?: string | null;
  userId: string | null;
  address: string;
  method: string | null;
  action: string;
  siteId: string | null;
  target: { kind: string; id: string } | null;
  status: number;
  outcome: AuditOutcome;
  problem: string | null;
}

/** An answer's outcome by its status: a refusal (401, 403, 429), a failure (any other 4xx or 5xx), or ok. */
export const outcomeOfStatus = (status: number): AuditOutcome =>
  status === 401 || status === 403 || status === 429 ? 'refused' : status >= 400 ? 'failed' : 'ok';

/** What the sign-in form answers: a redirect on success, 401 on a wrong name or password (dashboard/sign-in.routes.ts). */
const SIGNED_IN_STATUS = 303;
const SIGN_IN_FAILED_STATUS = 401;
const SIGN_IN_FAILED_PROBLEM = '/problems/sign-in-failed';
/** A refused single sign-on is recorded as 403 whatever its page answered; its problem type says why. */
const OIDC_REFUSED_STATUS = 403;
/** The longest name, address or id kept (longer input is cut). */
const MAX_FIELD = 200;

const cut = (value: string | null | undefined): string | null => (value == null ? null : value.slice(0, MAX_FIELD));
const text = (fields: Record<string, unknown>, name: string) =>
  typeof fields[name] === 'string' ? (fields[name] as string) : null;

/**
 * The audit log (issue 33): one append-only table of every state-changing request (recorded by
 * one middleware on the API and one on the dashboard, audit.middleware.ts) and of every sign-in
 * attempt (from the `user.signed_in` and `user.sign_in_failed` events, so every way of signing in
 * that emits them is covered). Pruned by retention only.
 */
export function createAuditLogService({
  repository,
  clock,
  events,
  logger,
  config = DEFAULT_AUDIT_LOG_CONFIG,
}: {
  repository: AuditLogRepository;
  clock: Clock;
  events: Events;
  logger: Logger;
  config?: AuditLogConfig;
}) {
  /** Writes the entry; never throws (a write that fails is logged). */
  async function record(entry: AuditRecord): Promise<void> {
    const now = clock.now();
    try {
      await repository.insert({
        id: createId('aud', now),
        at: now,
        source: entry.source,
        actorKind: entry.actor?.kind ?? null,
        actorId: cut(entry.actor?.id),
        actorName: cut(entry.actor?.name ?? entry.attemptedName),
        userId: cut(entry.userId),
        address: cut(entry.address) ?? '',
        method: entry.method,
        action: cut(entry.action) ?? '',
        siteId: cut(entry.siteId),
        targetKind: cut(entry.target?.kind),
        targetId: cut(entry.target?.id),
        status: entry.status,
        outcome: entry.outcome,
        problem: cut(entry.problem),
      });
    } catch (error) {
      // The request was answered already: a full disk must not turn it into a 500. The log says it.
      logger.error({ err: error, action: entry.action }, 'could not record an audit log entry');
    }
  }

  /** Sign-ins, from their events: every way of signing in that emits them is covered. */
  function onEvent(event: PublishedEvent): Promise<void> | undefined {
    const fields = event.fields;
    const userId = text(fields, 'userId');
    const base = { source: 'dashboard' as const, address: text(fields, 'address') ?? '', siteId: null, target: null };
    switch (event.event) {
      case 'user.signed_in': {
        const oidc = text(fields, 'method') === 'oidc';
        return record({
          ...base,
          actor: userId ? { kind: 'user', id: userId, name: text(fields, 'username') } : null,
          userId,
          method: oidc ? 'GET' : 'POST',
          action: oidc ? 'sign-in/oidc' : 'sign-in',
          status: SIGNED_IN_STATUS,
          outcome: 'ok',
          problem: null,
        });
      }
      case 'user.sign_in_failed':
        return record({
          ...base,
          actor: null,
          attemptedName: text(fields, 'username'),
          userId: null,
          method: 'POST',
          action: 'sign-in',
          status: SIGN_IN_FAILED_STATUS,
          outcome: 'refused',
          problem: SIGN_IN_FAILED_PROBLEM,
        });
      case 'user.two_factor_failed':
        // The right password, then a wrong code: not signed in, but whose account is known.
        return record({
          ...base,
          actor: null,
          attemptedName: text(fields, 'username'),
          userId,
          method: 'POST',
          action: 'sign-in/two-factor',
          status: SIGN_IN_FAILED_STATUS,
          outcome: 'refused',
          problem: null,
        });
      case 'user.oidc_sign_in_refused': {
        const reason = text(fields, 'reason');
        return record({
          ...base,
          actor: null,
          attemptedName: text(fields, 'email'),
          userId: null,
          method: 'GET',
          action: 'sign-in/oidc',
          status: OIDC_REFUSED_STATUS,
          outcome: 'refused',
          problem: reason ? problemType(reason) : null,
        });
      }
    }
  }
  // `record` never rejects: the promise is the write's, and nothing waits for it.
  events.subscribe((event) => void onEvent(event));

  const EXPORT_PAGE = 500;

  return {
    record,

    /** Newest first, a page and whether another follows (`limit + 1` rows asked for). */
    list: (filter: AuditLogFilter & { before?: string; limit: number }): Promise<AuditLogRow[]> =>
      repository.list(filter),

    /** Every entry the filter selects, oldest first, read a page at a time as the reader pulls. */
    async *entries(filter: AuditLogFilter): AsyncGenerator<AuditLogRow> {
      let after: string | undefined;
      for (;;) {
        const rows = await repository.listForward({ ...filter, after, limit: EXPORT_PAGE });
        yield* rows;
        if (rows.length < EXPORT_PAGE) return;
        after = rows[rows.length - 1]!.id;
      }
    },

    /** Removes the entries older than the retention (SITEWARDEN_AUDIT_RETENTION_DAYS); how many. */
    prune(): Promise<number> {
      return repository.pruneBefore(new Date(clock.now().getTime() - config.retentionDays * 86_400_000));
    },
  };
}

export type AuditLogService = ReturnType<typeof createAuditLogService>;
