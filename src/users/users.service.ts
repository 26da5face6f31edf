/**
 * The users feature's service, one object composed of its parts: the accounts (user-accounts.ts), the
 * sessions (user-sessions.ts) and the sign-ins (sign-in.ts) over the pure checks (user-checks.ts), and
 * two-factor (two-factor.service.ts) when the process brings its repository.
 */
import type { StateDatabase } from '../db/state-db.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import { passwordHasher, type PasswordHasher } from './passwords.js';
import { createSignIn, SIGN_IN_THROTTLE } from './sign-in.js';
import type { TwoFactorRepository } from './two-factor.repository.js';
import { createTwoFactorService, type TwoFactorService } from './two-factor.service.js';
import { createUserAccounts } from './user-accounts.js';
import { createUserSessions } from './user-sessions.js';
import { usersProblems } from './users.errors.js';
import type { UsersRepository } from './users.repository.js';
import type { UserRow } from './users.table.js';

export type { UserSummary } from './user-checks.js';
export type { SessionSummary, SignedInSession } from './user-sessions.js';

/** Dashboard users and their sessions. Passwords are scrypt hashes; session cookies are stored as SHA-256 hashes. */
export function createUsersService({
  repository,
  state,
  clock,
  events,
  hasher = passwordHasher,
  throttle = SIGN_IN_THROTTLE,
  twoFactorRepository,
  secrets,
}: {
  repository: UsersRepository;
  /**
   * The daemon's state database: in a cluster (PostgreSQL) the sign-ins' attempts and pending second
   * steps are kept in it, for every API process to share; otherwise (and without it) in memory.
   */
  state?: Pick<StateDatabase, 'dialect' | 'run'>;
  clock: Clock;
  events: Events;
  /** The process's bounded hashing pool unless a test brings its own. */
  hasher?: PasswordHasher;
  throttle?: typeof SIGN_IN_THROTTLE;
  /** Two-factor sign-in (the daemon brings both; the CLI neither). */
  twoFactorRepository?: TwoFactorRepository;
  secrets?: SecretBox;
}) {
  const twoFactorService: TwoFactorService | null = twoFactorRepository
    ? createTwoFactorService({ repository: twoFactorRepository, users: repository, secrets, clock, events, hasher })
    : null;

  async function findUser(id: string): Promise<UserRow> {
    const user = await repository.findById(id);
    if (!user) throw usersProblems.notFound.create(`no user has the id ${id}`);
    return user;
  }

  function twoFactor(): TwoFactorService {
    if (!twoFactorService) throw new Error('two-factor is not configured in this process');
    return twoFactorService;
  }

  const { sessionsEnded, endSessionsOf, openSession, ...sessions } = createUserSessions({
    repository,
    clock,
    events,
    findUser,
    twoFactorRepository,
  });
  const accounts = createUserAccounts({
    repository,
    clock,
    events,
    hasher,
    findUser,
    sessions: { sessionsEnded, endSessionsOf },
  });
  const signIns = createSignIn({
    repository,
    state,
    clock,
    events,
    hasher,
    throttle,
    twoFactor,
    findUser,
    sessions: { openSession },
  });

  return {
    /** create, list, find, setRole, setScope, delete, changeOwnPassword, resetPassword, ensureBootstrapAdmin. */
    ...accounts,
    /** signInBusy, signIn, completeSignIn, openSingleSignOnSession. */
    ...signIns,

    /** Two-factor: enrolment, recovery codes, the owners' policy (two-factor.service.ts). */
    get twoFactor(): TwoFactorService {
      return twoFactor();
    },

    /** listSessions, revokeSession, revokeOtherSessions, authenticate, signOut, isSessionLive, watchSession, pruneSessions. */
    ...sessions,
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
