/**
 * The users service's accounts: creating, listing and deleting users, their role and scope, their
 * passwords (changed by the user, reset by the CLI), and the first start's `admin` with its password
 * file. A change of role, scope or password ends the user's sessions (user-sessions.ts).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isUniqueViolation } from '../db/dialect.js';
import { isRole, roles, type Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import { createId } from '../shared/ids.js';
import { randomPassword, type PasswordHasher } from './passwords.js';
import {
  checkPassword,
  checkScopeTags,
  checkUsername,
  MAX_PASSWORD,
  toSummary,
  type UserSummary,
} from './user-checks.js';
import type { UserSessions } from './user-sessions.js';
import { usersProblems } from './users.errors.js';
import type { UsersRepository } from './users.repository.js';
import type { UserRole, UserRow } from './users.table.js';

const BOOTSTRAP_PASSWORD_FILE = 'admin-password';

export function createUserAccounts({
  repository,
  clock,
  events,
  hasher,
  findUser,
  sessions: { sessionsEnded, endSessionsOf },
}: {
  repository: UsersRepository;
  clock: Clock;
  events: Events;
  hasher: PasswordHasher;
  /** The user with the id, else `user-not-found`. */
  findUser: (id: string) => Promise<UserRow>;
  sessions: Pick<UserSessions, 'sessionsEnded' | 'endSessionsOf'>;
}) {
  const lastOwner = (user: UserRow) =>
    usersProblems.lastOwner.create(`${user.username} is the only owner; make another user an owner first`);

  /** A new user; `owner` unless another role is given (the CLI and the first user; the dashboard asks). */
  async function create(rawUsername: string, password: string, role: UserRole = 'owner'): Promise<UserSummary> {
    if (!isRole(role)) throw usersProblems.roleInvalid.create(`a role is one of ${roles.join(', ')}`);
    const username = checkUsername(rawUsername);
    checkPassword(password);
    if (await repository.findByUsername(username)) throw usersProblems.exists.create(`the user ${username} exists`);
    const now = clock.now();
    const row: UserRow = {
      id: createId('usr', now),
      username,
      passwordHash: await hasher.hash(password),
      role,
      scopeTags: null,
      createdAt: now,
      passwordChangedAt: now,
      lastSignedInAt: null,
      totpSecret: null,
      totpPendingSecret: null,
      totpEnabledAt: null,
      totpLastStep: null,
      oidcIssuer: null,
      oidcSubject: null,
    };
    try {
      await repository.insertUser(row);
    } catch (error) {
      // Two requests for one name at once (the hash is awaited between the check and the insert): the unique index decides.
      if (isUniqueViolation(error)) throw usersProblems.exists.create(`the user ${username} exists`);
      throw error;
    }
    events.emit('user.created', { userId: row.id, username, role });
    return toSummary(row);
  }

  return {
    create,

    list: async (): Promise<UserSummary[]> => (await repository.listUsers()).map(toSummary),

    find: async (id: string): Promise<UserSummary | undefined> => {
      const row = await repository.findById(id);
      return row && toSummary(row);
    },

    /**
     * Gives the user another role and ends their sessions and open event streams (they sign in
     * again under the new role; their tokens follow at once, tokens.service.ts). The last owner
     * keeps the owner role (`last-owner`).
     */
    async setRole(id: string, role: UserRole, by?: Actor): Promise<UserSummary> {
      if (!isRole(role)) throw usersProblems.roleInvalid.create(`a role is one of ${roles.join(', ')}`);
      const user = await findUser(id);
      if (user.role === role) return toSummary(user);
      // The last owner check is the write's own (users.repository.ts): two owners demoted at once leave one.
      const outcome = await repository.setRole(user.id, role);
      if (outcome === 'last-owner') throw lastOwner(user);
      if (outcome === 'missing') throw usersProblems.notFound.create(`no user has the id ${id}`);
      await endSessionsOf(user.id);
      events.emit('user.role_changed', {
        userId: user.id,
        username: user.username,
        from: user.role,
        to: role,
        by: by ?? null,
      });
      return toSummary({ ...user, role });
    },

    /**
     * Limits the user to the sites carrying any of `tags` (null: every site), ends their sessions and
     * open event streams (their tokens follow at once, tokens.service.ts). An owner always sees every
     * site; a client's scope names at least one tag (docs/design/team-access.md).
     */
    async setScope(id: string, rawTags: readonly string[] | null, by?: Actor): Promise<UserSummary> {
      const user = await findUser(id);
      const tags = rawTags === null ? null : checkScopeTags(rawTags);
      if (user.role === 'owner' && tags !== null)
        throw usersProblems.scopeInvalid.create(`${user.username} is an owner: an owner sees every site`);
      if (user.role === 'client' && (tags === null || tags.length === 0))
        throw usersProblems.scopeInvalid.create(
          `${user.username} is a client: a client's scope names at least one tag`,
        );
      await repository.setScopeTags(user.id, tags);
      await endSessionsOf(user.id);
      events.emit('user.scope_changed', { userId: user.id, username: user.username, tags, by: by ?? null });
      return toSummary({ ...user, scopeTags: tags });
    },

    /** Deletes the user, their sessions and streams; their tokens are refused from now on. Never the last owner. */
    async delete(id: string, by?: Actor): Promise<UserSummary> {
      const user = await findUser(id);
      const { outcome, sessionIds } = await repository.deleteUser(user.id);
      if (outcome === 'last-owner') throw lastOwner(user);
      if (outcome === 'missing') throw usersProblems.notFound.create(`no user has the id ${id}`);
      sessionsEnded(sessionIds);
      events.emit('user.deleted', { userId: user.id, username: user.username, by: by ?? null });
      return toSummary(user);
    },

    /**
     * A user changes their own password: the current one is checked first; every other session of
     * theirs ends (and its streams), the one asking stays signed in.
     */
    async changeOwnPassword(
      userId: string,
      currentSessionId: string,
      currentPassword: string,
      newPassword: string,
    ): Promise<void> {
      const user = await findUser(userId);
      checkPassword(newPassword);
      const candidate = currentPassword.slice(0, MAX_PASSWORD);
      if (!(await hasher.verify(candidate, user.passwordHash)) || currentPassword.length > MAX_PASSWORD)
        throw usersProblems.currentPasswordWrong.create('the current password is not right; nothing changed');
      await repository.setPassword(user.id, await hasher.hash(newPassword), clock.now());
      sessionsEnded(await repository.deleteOtherSessionsOf(user.id, currentSessionId));
      events.emit('user.password_changed', { userId: user.id, username: user.username });
    },

    /** Sets a new password (a random one when none is given, returned once) and ends the user's sessions. */
    async resetPassword(rawUsername: string, password = randomPassword()): Promise<string> {
      const user = await repository.findByUsername(checkUsername(rawUsername));
      if (!user) throw usersProblems.notFound.create(`no user is named ${rawUsername}`);
      checkPassword(password);
      await repository.setPassword(user.id, await hasher.hash(password), clock.now());
      await endSessionsOf(user.id);
      events.emit('user.password_reset', { userId: user.id, username: user.username });
      return password;
    },

    /**
     * On a first start nobody can sign in: an `admin` user is created with a random password,
     * written once to a 0600 file in the data directory. Its path is logged, never the password.
     */
    async ensureBootstrapAdmin(dataDir: string): Promise<{ path: string } | null> {
      if ((await repository.countUsers()) > 0) return null;
      const password = randomPassword();
      const user = await create('admin', password, 'owner');
      const path = join(dataDir, BOOTSTRAP_PASSWORD_FILE);
      const temporary = `${path}.tmp-${process.pid}`;
      writeFileSync(temporary, `username: admin\npassword: ${password}\n`, { mode: 0o600 });
      renameSync(temporary, path);
      events.emit(
        'user.bootstrap_created',
        { userId: user.id, path },
        `no dashboard user existed: user "admin" was created; its password is in ${path}`,
      );
      return { path };
    },
  };
}
