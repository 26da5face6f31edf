import { and, asc, count, desc, eq, gt, isNull, lt, or } from 'drizzle-orm';
import { rowsChanged, tableFor, writeTogether } from '../db/dialect.js';
import type { StateDatabase, StateDb } from '../db/state-db.js';
import * as pg from './users.pg-table.js';
import * as sqlite from './users.table.js';
import type { RecoveryCodeRow } from './users.table.js';

const SETTINGS_ID = 1;

/**
 * Two-factor state (users' TOTP columns, recovery codes, the owners' policy) and the session list, on
 * either dialect (issue 34, docs/design/cluster-state.md): one body, every statement through the state
 * database. What a service read to decide is checked again by the write (`where`), so that two requests
 * at once (in any process) cannot both enrol, or both use one code.
 */
export function createTwoFactorRepository(state: StateDatabase) {
  const users = tableFor(state.dialect, { sqlite: sqlite.users, postgres: pg.users });
  const sessions = tableFor(state.dialect, { sqlite: sqlite.sessions, postgres: pg.sessions });
  const recoveryCodes = tableFor(state.dialect, { sqlite: sqlite.recoveryCodes, postgres: pg.recoveryCodes });
  const twoFactorSettings = tableFor(state.dialect, {
    sqlite: sqlite.twoFactorSettings,
    postgres: pg.twoFactorSettings,
  });
  const replaceCodes = (db: StateDb, userId: string, codes: RecoveryCodeRow[]) => [
    db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)),
    ...(codes.length > 0 ? [db.insert(recoveryCodes).values(codes)] : []),
  ];

  return {
    /** Keeps the sealed secret of an enrolment begun: false when two-factor is on already (or the user is gone). */
    setPendingSecret: (userId: string, sealed: string): Promise<boolean> =>
      state.run(
        async (db) =>
          rowsChanged(
            await db
              .update(users)
              .set({ totpPendingSecret: sealed })
              .where(and(eq(users.id, userId), isNull(users.totpSecret))),
          ) === 1,
      ),

    /**
     * Turns two-factor on with the pending secret `sealed` (confirmed with a code of `step`) and replaces
     * the recovery codes, in one transaction: false, and nothing written, when two-factor is on already or
     * that secret is no longer the pending one (another request confirmed or began again meanwhile).
     */
    enable: (userId: string, sealed: string, step: number, at: Date, codes: RecoveryCodeRow[]): Promise<boolean> =>
      state.transaction(async (tx) => {
        const enabled = rowsChanged(
          await tx
            .update(users)
            .set({ totpSecret: sealed, totpPendingSecret: null, totpEnabledAt: at, totpLastStep: step })
            .where(and(eq(users.id, userId), isNull(users.totpSecret), eq(users.totpPendingSecret, sealed))),
        );
        if (enabled !== 1) return false;
        for (const write of replaceCodes(tx, userId, codes)) await write;
        return true;
      }),

    /** Turns two-factor off: the secret, a pending enrolment and the recovery codes go. */
    disable: (userId: string): Promise<void> =>
      writeTogether(state, (db) => [
        db
          .update(users)
          .set({ totpSecret: null, totpPendingSecret: null, totpEnabledAt: null, totpLastStep: null })
          .where(eq(users.id, userId)),
        db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)),
      ]),

    /**
     * Records `step` as the last accepted one, only if it is later than the one recorded: false when
     * another request took this step (or a later one) first, i.e. a replay.
     */
    takeStep: (userId: string, step: number): Promise<boolean> =>
      state.run(
        async (db) =>
          rowsChanged(
            await db
              .update(users)
              .set({ totpLastStep: step })
              .where(and(eq(users.id, userId), or(isNull(users.totpLastStep), lt(users.totpLastStep, step)))),
          ) === 1,
      ),

    replaceRecoveryCodes: (userId: string, codes: RecoveryCodeRow[]): Promise<void> =>
      writeTogether(state, (db) => replaceCodes(db, userId, codes)),

    /** Marks the user's unused code with this hash used: false when there is none (wrong, or used already). */
    useRecoveryCode: (userId: string, codeHash: string, at: Date): Promise<boolean> =>
      state.run(
        async (db) =>
          rowsChanged(
            await db
              .update(recoveryCodes)
              .set({ usedAt: at })
              .where(
                and(
                  eq(recoveryCodes.userId, userId),
                  eq(recoveryCodes.codeHash, codeHash),
                  isNull(recoveryCodes.usedAt),
                ),
              ),
          ) === 1,
      ),

    recoveryCodesLeft: (userId: string): Promise<number> =>
      state.run((db) =>
        db
          .select({ n: count() })
          .from(recoveryCodes)
          .where(and(eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt)))
          .then((rows) => rows[0]?.n ?? 0),
      ),

    readRequired: (): Promise<boolean> =>
      state.run((db) =>
        db
          .select({ required: twoFactorSettings.required })
          .from(twoFactorSettings)
          .where(eq(twoFactorSettings.id, SETTINGS_ID))
          .then((rows) => rows[0]?.required ?? false),
      ),

    writeRequired: (required: boolean, at: Date, by: string | null): Promise<void> =>
      state.run(async (db) => {
        await db
          .insert(twoFactorSettings)
          .values({ id: SETTINGS_ID, required, changedAt: at, changedBy: by })
          .onConflictDoUpdate({ target: twoFactorSettings.id, set: { required, changedAt: at, changedBy: by } });
      }),

    /** The user's live sessions, the most recently seen first. */
    sessionsOf: (userId: string, now: Date) =>
      state.run((db) =>
        db
          .select({
            id: sessions.id,
            createdAt: sessions.createdAt,
            lastSeenAt: sessions.lastSeenAt,
            expiresAt: sessions.expiresAt,
            address: sessions.address,
            userAgent: sessions.userAgent,
          })
          .from(sessions)
          .where(and(eq(sessions.userId, userId), gt(sessions.expiresAt, now)))
          .orderBy(desc(sessions.lastSeenAt), asc(sessions.id)),
      ),

    /** Deletes the user's session with that id: false when they have none such. */
    deleteSessionOf: (userId: string, sessionId: string): Promise<boolean> =>
      state.run(
        async (db) =>
          rowsChanged(await db.delete(sessions).where(and(eq(sessions.userId, userId), eq(sessions.id, sessionId)))) ===
          1,
      ),
  };
}

export type TwoFactorRepository = ReturnType<typeof createTwoFactorRepository>;
