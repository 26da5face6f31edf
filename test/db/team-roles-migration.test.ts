import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { sqliteStateOf } from '../../src/db/state-db.js';
import { createTokensRepository } from '../../src/tokens/tokens.repository.js';
import { createTokensService } from '../../src/tokens/tokens.service.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { createLoggedEvents } from '../../src/shared/logger.js';
import { createCapturedLogger } from '../support/log-capture.js';

/** An upgrade from the version before roles (0026): admin users, read and write tokens without users. */
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function databaseBeforeRoles(withUsers: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'sitewarden-roles-migration-'));
  dirs.push(dir);
  const migrations = join(dir, 'drizzle');
  cpSync(resolve(import.meta.dirname, '../../drizzle'), migrations, { recursive: true });
  const journalPath = join(migrations, 'meta/_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
  journal.entries = journal.entries.filter((entry) => entry.tag < '0026');
  writeFileSync(journalPath, JSON.stringify(journal));
  const path = join(dir, 'sitewarden.db');
  const sqlite = new Database(path);
  migrate(drizzle(sqlite), { migrationsFolder: migrations });
  const insert = (sql: string) => sqlite.prepare(sql).run();
  if (withUsers) {
    insert(
      `insert into users (id, username, password_hash, role, created_at, password_changed_at) values ('usr_b', 'later', 'x', 'admin', 2000, 2000)`,
    );
    insert(
      `insert into users (id, username, password_hash, role, created_at, password_changed_at) values ('usr_a', 'admin', 'x', 'admin', 1000, 1000)`,
    );
  }
  insert(
    `insert into api_tokens (id, name, scope, token_hash, prefix, created_at) values ('tok_w', 'deploy', 'write', 'hash-w', 'swt_aaaaaa', 1000)`,
  );
  insert(
    `insert into api_tokens (id, name, scope, token_hash, prefix, created_at) values ('tok_r', 'grafana', 'read', 'hash-r', 'swt_bbbbbb', 1000)`,
  );
  sqlite.close();
  return path;
}

describe('upgrading to roles', () => {
  it('makes admins owners, write tokens owner tokens and read tokens viewer tokens, all of the oldest user', async () => {
    const database = openDatabase(databaseBeforeRoles(true));
    try {
      expect(database.sqlite.prepare('select id, role from users order by id').all()).toEqual([
        { id: 'usr_a', role: 'owner' },
        { id: 'usr_b', role: 'owner' },
      ]);
      expect(
        database.sqlite.prepare('select id, scope, role, user_id, expires_at from api_tokens order by id').all(),
      ).toEqual([
        { id: 'tok_r', scope: 'read', role: 'viewer', user_id: 'usr_a', expires_at: null },
        { id: 'tok_w', scope: 'write', role: 'owner', user_id: 'usr_a', expires_at: null },
      ]);
      // The service reads them as the roles they became.
      const logs = createCapturedLogger();
      const tokens = createTokensService({
        repository: createTokensRepository(sqliteStateOf(database)),
        clock: createFakeClock(),
        events: createLoggedEvents(logs.logger),
      });
      expect((await tokens.list()).map((token) => [token.id, token.role, token.scope, token.userId])).toEqual([
        ['tok_r', 'viewer', 'read', 'usr_a'],
        ['tok_w', 'owner', 'write', 'usr_a'],
      ]);
    } finally {
      database.close();
    }
  });

  it('leaves the tokens without a user (operator tokens) when there is no user yet', () => {
    const database = openDatabase(databaseBeforeRoles(false));
    try {
      expect(database.sqlite.prepare('select id, role, user_id from api_tokens order by id').all()).toEqual([
        { id: 'tok_r', role: 'viewer', user_id: null },
        { id: 'tok_w', role: 'owner', user_id: null },
      ]);
    } finally {
      database.close();
    }
  });
});
