import { and, eq, isNull } from 'drizzle-orm';
import { firstRow, rowsChanged, tableFor } from '../db/dialect.js';
import type { StateDatabase } from '../db/state-db.js';
import * as pg from './users.pg-table.js';
import * as sqlite from './users.table.js';
import type { UserRow } from './users.table.js';

/**
 * The users' single sign-on identities (the `oidc_issuer`/`oidc_subject` columns of `users`), on either
 * dialect (issue 34, docs/design/cluster-state.md): one body, every statement through the state database.
 */
export function createOidcRepository(state: StateDatabase) {
  const users = tableFor(state.dialect, { sqlite: sqlite.users, postgres: pg.users });
  return {
    findByIdentity: (issuer: string, subject: string): Promise<UserRow | undefined> =>
      state.run((db) =>
        db
          .select()
          .from(users)
          .where(and(eq(users.oidcIssuer, issuer), eq(users.oidcSubject, subject)))
          .then(firstRow),
      ),
    findByUsername: (username: string): Promise<UserRow | undefined> =>
      state.run((db) => db.select().from(users).where(eq(users.username, username)).then(firstRow)),
    /** Links the user to the identity; false when the user is gone or already linked to another one. */
    link: (userId: string, issuer: string, subject: string): Promise<boolean> =>
      state.run(
        async (db) =>
          rowsChanged(
            await db
              .update(users)
              .set({ oidcIssuer: issuer, oidcSubject: subject })
              .where(and(eq(users.id, userId), isNull(users.oidcIssuer))),
          ) === 1,
      ),
  };
}
