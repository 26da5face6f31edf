import { and, asc, count, desc, eq, gt, isNull, lt, or } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { recoveryCodes, sessions, twoFactorSettings, users, type RecoveryCodeRow } from './users.table.js';

const SETTINGS_ID = 1;

/** Two-factor state (users' TOTP columns, recovery codes, the owners' policy) and the session list. */
export function createTwoFactorRepository({ db }: { db: Db }) {
  return {
    setPendingSecret(userId: string, sealed: string | null): void {
      db.update(users).set({ totpPendingSecret: sealed }).where(eq(users.id, userId)).run();
    },

    /** Turns two-factor on with the confirmed secret and replaces the recovery codes, in one transaction. */
    enable(userId: string, sealed: string, step: number, at: Date, codes: RecoveryCodeRow[]): void {
      db.transaction((tx) => {
        tx.update(users)
          .set({ totpSecret: sealed, totpPendingSecret: null, totpEnabledAt: at, totpLastStep: step })
          .where(eq(users.id, userId))
          .run();
        tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)).run();
        if (codes.length > 0) tx.insert(recoveryCodes).values(codes).run();
      });
    },

    /** Turns two-factor off: the secret, a pending enrolment and the recovery codes go. */
    disable(userId: string): void {
      db.transaction((tx) => {
        tx.update(users)
          .set({ totpSecret: null, totpPendingSecret: null, totpEnabledAt: null, totpLastStep: null })
          .where(eq(users.id, userId))
          .run();
        tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)).run();
      });
    },

    /**
     * Records `step` as the last accepted one, only if it is later than the one recorded: false when
     * another request took this step (or a later one) first, i.e. a replay.
     */
    takeStep(userId: string, step: number): boolean {
      return (
        db
          .update(users)
          .set({ totpLastStep: step })
          .where(and(eq(users.id, userId), or(isNull(users.totpLastStep), lt(users.totpLastStep, step))))
          .run().changes === 1
      );
    },

    replaceRecoveryCodes(userId: string, codes: RecoveryCodeRow[]): void {
      db.transaction((tx) => {
        tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)).run();
        if (codes.length > 0) tx.insert(recoveryCodes).values(codes).run();
      });
    },

    /** Marks the user's unused code with this hash used: false when there is none (wrong, or used already). */
    useRecoveryCode(userId: string, codeHash: string, at: Date): boolean {
      return (
        db
          .update(recoveryCodes)
          .set({ usedAt: at })
          .where(
            and(eq(recoveryCodes.userId, userId), eq(recoveryCodes.codeHash, codeHash), isNull(recoveryCodes.usedAt)),
          )
          .run().changes === 1
      );
    },

    recoveryCodesLeft: (userId: string): number =>
      db
        .select({ n: count() })
        .from(recoveryCodes)
        .where(and(eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt)))
        .get()?.n ?? 0,

    readRequired: (): boolean =>
      db.select().from(twoFactorSettings).where(eq(twoFactorSettings.id, SETTINGS_ID)).get()?.required ?? false,

    writeRequired(required: boolean, at: Date, by: string | null): void {
      db.insert(twoFactorSettings)
        .values({ id: SETTINGS_ID, required, changedAt: at, changedBy: by })
        .onConflictDoUpdate({ target: twoFactorSettings.id, set: { required, changedAt: at, changedBy: by } })
        .run();
    },

    /** The user's live sessions, the most recently seen first. */
    sessionsOf: (userId: string, now: Date) =>
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
        .orderBy(desc(sessions.lastSeenAt), asc(sessions.id))
        .all(),

    /** Deletes the user's session with that id: false when they have none such. */
    deleteSessionOf(userId: string, sessionId: string): boolean {
      return (
        db
          .delete(sessions)
          .where(and(eq(sessions.userId, userId), eq(sessions.id, sessionId)))
          .run().changes === 1
      );
    },
  };
}

export type TwoFactorRepository = ReturnType<typeof createTwoFactorRepository>;
