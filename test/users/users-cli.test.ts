import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { sqliteStateOf } from '../../src/db/state-db.js';
import { createTwoFactorRepository, createUsersRepository } from '../../src/users/index.js';
import { usersCommand } from '../../src/users/users.cli.js';
import { verifyPassword } from '../../src/users/passwords.js';

/** The data directory's database, as the command line opens it when no daemon runs. */
const openIn = (dataDir: string) => async () => sqliteStateOf(openDatabase(join(dataDir, 'sitewarden.db')));

describe('sitewarden users', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sw-users-cli-'));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('creates a user and resets its password, printing each random password once', async () => {
    const lines: string[] = [];
    const run = (args: string[]) => usersCommand({ args, open: openIn(dataDir), out: (line) => lines.push(line) });
    expect(await run(['create', 'Ops@Example.com'])).toBe(0);
    const first = lines.at(-1)!;
    await expect(run(['create', 'ops@example.com'])).rejects.toMatchObject({
      detail: 'the user ops@example.com exists',
    });
    expect(await run(['reset-password', 'ops@example.com'])).toBe(0);
    const second = lines.at(-1)!;
    expect(second).not.toBe(first);
    expect(await run(['list'])).toBe(0);
    expect(lines.at(-1)).toMatch(/\tops@example\.com\towner\tall\t-$/);
    expect(await run(['create', 'eve', '--role', 'viewer'])).toBe(0);
    expect(lines.at(-2)).toBe('user eve (viewer) created; password (shown once):');
    expect(await run(['create', 'mallory', '--role', 'admin'])).toBe(2);
    expect(await run(['set-role', 'eve', 'owner'])).toBe(0);
    expect(await run(['set-role', 'ops@example.com', 'viewer'])).toBe(0);
    await expect(run(['set-role', 'eve', 'viewer'])).rejects.toMatchObject({ problem: { name: 'last-owner' } });
    expect(await run(['frobnicate'])).toBe(2);
    const database = openDatabase(join(dataDir, 'sitewarden.db'));
    try {
      const user = (await createUsersRepository(sqliteStateOf(database)).findByUsername('ops@example.com'))!;
      expect(await verifyPassword(second, user.passwordHash)).toBe(true);
      expect(await verifyPassword(first, user.passwordHash)).toBe(false);
    } finally {
      database.close();
    }
  });

  it('turns a user’s two-factor off (reset-two-factor): the break glass for a lost authenticator', async () => {
    const lines: string[] = [];
    const run = (args: string[]) => usersCommand({ args, open: openIn(dataDir), out: (line) => lines.push(line) });
    expect(await run(['create', 'olga'])).toBe(0);
    await expect(run(['reset-two-factor', 'olga'])).rejects.toMatchObject({
      problem: { name: 'two-factor-not-enabled' },
    });
    const database = openDatabase(join(dataDir, 'sitewarden.db'));
    try {
      const state = sqliteStateOf(database);
      const repository = createUsersRepository(state);
      const user = (await repository.findByUsername('olga'))!;
      await createTwoFactorRepository(state).setPendingSecret(user.id, 'sealed-secret');
      await createTwoFactorRepository(state).enable(user.id, 'sealed-secret', 1, new Date(), []);
      expect((await repository.findByUsername('olga'))?.totpSecret).toBe('sealed-secret');
      expect(await run(['reset-two-factor', 'OLGA'])).toBe(0);
      expect(lines.at(-1)).toBe('two-factor of olga is off; they sign in with their password and may set it up again');
      expect((await repository.findByUsername('olga'))?.totpSecret).toBeNull();
      await expect(run(['reset-two-factor', 'nobody'])).rejects.toMatchObject({ problem: { name: 'user-not-found' } });
    } finally {
      database.close();
    }
  });

  it('limits a user to the sites of some tags, and lifts the limit (set-scope)', async () => {
    const lines: string[] = [];
    const run = (args: string[]) => usersCommand({ args, open: openIn(dataDir), out: (line) => lines.push(line) });
    expect(await run(['create', 'cleo', '--role', 'client'])).toBe(0);
    expect(await run(['set-scope', 'cleo', '--tags', 'Client:Acme, staging'])).toBe(0);
    expect(lines.at(-1)).toBe('cleo now sees the sites tagged client:acme, staging (their sessions ended)');
    const database = openDatabase(join(dataDir, 'sitewarden.db'));
    try {
      expect((await createUsersRepository(sqliteStateOf(database)).findByUsername('cleo'))?.scopeTags).toEqual([
        'client:acme',
        'staging',
      ]);
    } finally {
      database.close();
    }
    // A client's scope names a tag: --all is refused for a client, not for a viewer.
    await expect(run(['set-scope', 'cleo', '--all'])).rejects.toMatchObject({ problem: { name: 'scope-invalid' } });
    await expect(run(['set-scope', 'cleo', '--tags', 'bad\u0007tag'])).rejects.toMatchObject({
      detail: 'a scope tag must not contain control characters',
    });
    expect(await run(['list'])).toBe(0);
    expect(lines.at(-1)).toMatch(/\tcleo\tclient\tclient:acme,staging\t-$/);
  });
});
