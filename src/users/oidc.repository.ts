import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { users, type UserRow } from './users.table.js';

/** The users' single sign-on identities (the `oidc_issuer`/`oidc_subject` columns of `users`). */
export function createOidcRepository({ db }: { db: Db }) {
  return {
    findByIdentity: (issuer: string, subject: string): UserRow | undefined =>
      db
        .select()
        .from(users)
        .where(and(eq(users.oidcIssuer, issuer), eq(users.oidcSubject, subject)))
        .get(),
    findByUsername: (username: string): UserRow | undefined =>
      db.select().from(users).where(eq(users.username, username)).get(),
    /** Links the user to the identity; false when the user is gone or already linked to another one. */
    link(userId: string, issuer: string, subject: string): boolean {
      return (
        db.update(users).set({ oidcIssuer: issuer, oidcSubject: subject }).where(eq(users.id, userId)).run().changes ===
        1
      );
    },
  };
}
