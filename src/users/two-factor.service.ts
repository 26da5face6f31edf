import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import { createId } from '../shared/ids.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { PasswordHasher } from './passwords.js';
import {
  hashRecoveryCode,
  looksLikeTotpCode,
  newRecoveryCodes,
  newTotpSecret,
  qrCodeSvg,
  totpStep,
  totpUri,
} from './two-factor.js';
import { twoFactorProblems } from './two-factor.errors.js';
import type { TwoFactorRepository } from './two-factor.repository.js';
import { usersProblems } from './users.errors.js';
import type { UsersRepository } from './users.repository.js';
import type { RecoveryCodeRow, UserRow } from './users.table.js';

const MAX_PASSWORD = 1024;

export interface TwoFactorStatus {
  enabled: boolean;
  enabledAt: Date | null;
  /** An enrolment was begun and awaits its first code. */
  pending: boolean;
  recoveryCodesLeft: number;
  /** Whether the owners require two-factor of every user. */
  required: boolean;
}

export interface Enrolment {
  /** The base32 secret, for typing into an app. */
  secret: string;
  /** The otpauth:// URI the QR code holds. */
  uri: string;
  /** The QR code as inline SVG (no style attributes, no script). */
  qrSvg: string;
}

/** How a second factor was proven at sign-in. */
export type SecondFactor = 'totp' | 'recovery-code';

const actorKey = (by: Actor | null | undefined) => (by ? `${by.kind}:${by.id}` : null);

/**
 * A user's TOTP two-factor: enrolment (a secret sealed with the daemon's secret box, confirmed by
 * a first code), ten single-use recovery codes (hashed), turning it off (a code or the password),
 * an owner's reset, and the owners' "required" policy. The sign-in's second step calls `check`.
 */
export function createTwoFactorService({
  repository,
  users,
  secrets,
  clock,
  events,
  hasher,
}: {
  repository: TwoFactorRepository;
  users: UsersRepository;
  /** Absent in the CLI, which never enrols: enrolment then refuses. */
  secrets?: SecretBox;
  clock: Clock;
  events: Events;
  hasher: PasswordHasher;
}) {
  let required: boolean | undefined;

  function box(): SecretBox {
    if (!secrets) throw new Error('two-factor needs the daemon’s secret box');
    return secrets;
  }

  async function findUser(id: string): Promise<UserRow> {
    const user = await users.findById(id);
    if (!user) throw usersProblems.notFound.create(`no user has the id ${id}`);
    return user;
  }

  function recoveryRows(userId: string, codes: string[]): RecoveryCodeRow[] {
    const now = clock.now();
    return codes.map((code) => ({
      id: createId('rcv', now),
      userId,
      codeHash: hashRecoveryCode(code),
      createdAt: now,
      usedAt: null,
    }));
  }

  /** Whether `code` is a current TOTP code of the user not used before; records its step when it is. */
  async function acceptTotp(user: UserRow, code: string): Promise<boolean> {
    if (!user.totpSecret || !looksLikeTotpCode(code)) return false;
    const step = totpStep(box().open(user.totpSecret), code, clock.now());
    return step !== null && (await repository.takeStep(user.id, step));
  }

  async function requireTotp(user: UserRow, code: string): Promise<void> {
    if (!(await acceptTotp(user, code)))
      throw twoFactorProblems.codeInvalid.create('the code is wrong, expired or was used already; nothing changed');
  }

  const service = {
    async status(userId: string): Promise<TwoFactorStatus> {
      const user = await findUser(userId);
      return {
        enabled: user.totpSecret !== null,
        enabledAt: user.totpEnabledAt,
        pending: user.totpSecret === null && user.totpPendingSecret !== null,
        recoveryCodesLeft: user.totpSecret ? await repository.recoveryCodesLeft(user.id) : 0,
        required: await service.required(),
      };
    },

    /**
     * Begins an enrolment: a new secret, kept sealed as pending until a code made with it is
     * confirmed. Beginning again replaces it (a QR code scanned on the wrong phone).
     */
    async begin(userId: string): Promise<Enrolment> {
      const user = await findUser(userId);
      if (user.totpSecret) throw twoFactorProblems.alreadyEnabled.create('two-factor is on; turn it off first');
      const secret = newTotpSecret();
      // Refused by the write too when two-factor went on meanwhile (or the user went).
      if (!(await repository.setPendingSecret(user.id, box().seal(secret))))
        await refuseChanged(user.id, twoFactorProblems.alreadyEnabled.create('two-factor is on; turn it off first'));
      return service.enrolment(user.id, secret, user.username);
    },

    /** The pending enrolment again (the page reloaded), or null when none was begun. */
    async pendingEnrolment(userId: string): Promise<Enrolment | null> {
      const user = await findUser(userId);
      if (user.totpSecret || !user.totpPendingSecret) return null;
      return service.enrolment(user.id, box().open(user.totpPendingSecret), user.username);
    },

    async enrolment(_userId: string, secret: string, username: string): Promise<Enrolment> {
      const uri = totpUri(secret, username);
      return { secret, uri, qrSvg: await qrCodeSvg(uri) };
    },

    /** Confirms the enrolment with a code made from the pending secret: two-factor is on; the recovery codes, once. */
    async confirm(userId: string, code: string): Promise<{ recoveryCodes: string[] }> {
      const user = await findUser(userId);
      if (user.totpSecret) throw twoFactorProblems.alreadyEnabled.create('two-factor is on already');
      if (!user.totpPendingSecret)
        throw twoFactorProblems.notPending.create('begin the enrolment first (POST …/two-factor)');
      const step = looksLikeTotpCode(code) ? totpStep(box().open(user.totpPendingSecret), code, clock.now()) : null;
      if (step === null)
        throw twoFactorProblems.codeInvalid.create('the code is not right: check the app’s clock and try the next one');
      const codes = newRecoveryCodes();
      // Refused by the write when another request confirmed (or began again) meanwhile: its codes stay.
      if (!(await repository.enable(user.id, user.totpPendingSecret, step, clock.now(), recoveryRows(user.id, codes))))
        await refuseChanged(user.id, twoFactorProblems.alreadyEnabled.create('two-factor is on already'));
      events.emit('user.two_factor_enabled', { userId: user.id, username: user.username });
      return { recoveryCodes: codes };
    },

    /** Turns two-factor off for oneself: a current code (or a recovery code) or the password proves it. */
    async disable(userId: string, proof: { code?: string; password?: string }, by: Actor | null = null): Promise<void> {
      const user = await findUser(userId);
      if (!user.totpSecret) throw twoFactorProblems.notEnabled.create('two-factor is not on');
      if (proof.code) {
        if (!(await acceptTotp(user, proof.code)) && !(await useRecovery(user, proof.code)))
          throw twoFactorProblems.codeInvalid.create('the code is wrong, expired or was used already; nothing changed');
      } else if (proof.password) {
        const ok =
          (await hasher.verify(proof.password.slice(0, MAX_PASSWORD), user.passwordHash)) &&
          proof.password.length <= MAX_PASSWORD;
        if (!ok) throw usersProblems.currentPasswordWrong.create('the password is not right; nothing changed');
      } else {
        throw twoFactorProblems.proofRequired.create('give a current code (`code`) or your password (`password`)');
      }
      await repository.disable(user.id);
      events.emit('user.two_factor_disabled', { userId: user.id, username: user.username, by });
    },

    /** An owner turns another user's two-factor off (a lost phone); the user may enrol again. */
    async reset(userId: string, by: Actor | null): Promise<void> {
      const user = await findUser(userId);
      if (!user.totpSecret && !user.totpPendingSecret)
        throw twoFactorProblems.notEnabled.create(`${user.username} has no two-factor to reset`);
      await repository.disable(user.id);
      events.emit('user.two_factor_reset', { userId: user.id, username: user.username, by });
    },

    /** Ten new recovery codes (the old ones stop working); a current code proves it is the user. */
    async regenerateRecoveryCodes(userId: string, code: string): Promise<{ recoveryCodes: string[] }> {
      const user = await findUser(userId);
      if (!user.totpSecret) throw twoFactorProblems.notEnabled.create('two-factor is not on');
      await requireTotp(user, code);
      const codes = newRecoveryCodes();
      await repository.replaceRecoveryCodes(user.id, recoveryRows(user.id, codes));
      events.emit('user.recovery_codes_regenerated', { userId: user.id, username: user.username });
      return { recoveryCodes: codes };
    },

    /**
     * The sign-in's second step: a current TOTP code (not used before) or an unused recovery code
     * (used up by this). Null when neither; the caller counts the attempt before calling.
     */
    async check(userId: string, code: string): Promise<{ factor: SecondFactor; recoveryCodesLeft?: number } | null> {
      const user = await users.findById(userId);
      if (!user?.totpSecret) return null;
      if (await acceptTotp(user, code)) return { factor: 'totp' };
      if (await useRecovery(user, code))
        return { factor: 'recovery-code', recoveryCodesLeft: await repository.recoveryCodesLeft(user.id) };
      return null;
    },

    /** Whether owners require two-factor of every user (cached; only this service writes it). */
    async required(): Promise<boolean> {
      if (required === undefined) {
        const stored = await repository.readRequired();
        // A change written while this read waited stays.
        required ??= stored;
      }
      return required;
    },

    async setRequired(value: boolean, by: Actor | null): Promise<boolean> {
      const changed = (await service.required()) !== value;
      await repository.writeRequired(value, clock.now(), actorKey(by));
      required = value;
      if (changed) events.emit('user.two_factor_required_changed', { required: value, by });
      return value;
    },
  };

  function useRecovery(user: UserRow, code: string): Promise<boolean> {
    if (looksLikeTotpCode(code) || code.length > 64) return Promise.resolve(false);
    return repository.useRecoveryCode(user.id, hashRecoveryCode(code), clock.now());
  }

  /** A write refused because the user changed meanwhile: `user-not-found` when they went, else `problem`. */
  async function refuseChanged(userId: string, problem: Error): Promise<never> {
    await findUser(userId);
    throw problem;
  }

  return service;
}

export type TwoFactorService = ReturnType<typeof createTwoFactorService>;
