import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createWriteBatch, transactionOf } from '../../src/db/write-batch.js';

function database() {
  const sqlite = new Database(':memory:');
  sqlite.exec('create table notes (id integer primary key, text text not null unique)');
  const add = sqlite.prepare('insert into notes (text) values (?)');
  const texts = () => (sqlite.prepare('select text from notes order by id').pluck().all() as string[]).join(',');
  return { sqlite, transaction: transactionOf(drizzle(sqlite)), add: (text: string) => void add.run(text), texts };
}

describe('a write batch', () => {
  it('holds writes until the next commit, then writes them and the commit’s own in one transaction', () => {
    const { sqlite, transaction, add, texts } = database();
    const batch = createWriteBatch(transaction);
    batch.later(() => add('ended'));
    batch.later(() => add('patched'));
    expect(texts()).toBe('');
    let inTransaction = false;
    const answer = batch.commit(() => {
      inTransaction = sqlite.inTransaction;
      add('started');
      return 42;
    });
    expect(answer).toBe(42);
    expect(inTransaction).toBe(true);
    expect(texts()).toBe('ended,patched,started');
    // Nothing held and no work: no transaction at all.
    expect(batch.commit()).toBeUndefined();
  });

  it('rolls every write back when one throws, and keeps the held ones for the next commit', () => {
    const { transaction, add, texts } = database();
    add('taken');
    const batch = createWriteBatch(transaction);
    batch.later(() => add('ended'));
    expect(() => batch.commit(() => add('taken'))).toThrow(/UNIQUE/);
    expect(texts()).toBe('taken');
    batch.commit();
    expect(texts()).toBe('taken,ended');
  });

  it('runs a transaction made inside a commit as a savepoint of it', () => {
    const { transaction, add, texts } = database();
    const batch = createWriteBatch(transaction);
    batch.later(() => add('held'));
    batch.commit(() => {
      expect(() =>
        transaction(() => {
          add('inner');
          throw new Error('the inner work fails');
        }),
      ).toThrow('the inner work fails');
      add('after');
    });
    expect(texts()).toBe('held,after');
  });
});
