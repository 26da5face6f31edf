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
  it('holds writes until the next commit, then writes them and the commit’s own in one transaction', async () => {
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
    // Written before `commit` returns: its promise only reports it.
    expect(texts()).toBe('ended,patched,started');
    expect(await answer).toBe(42);
    expect(inTransaction).toBe(true);
    // Nothing held and no work: no transaction at all.
    expect(await batch.commit()).toBeUndefined();
  });

  it('rolls every write back when one throws, and keeps the held ones for the next commit', async () => {
    const { transaction, add, texts } = database();
    add('taken');
    const batch = createWriteBatch(transaction);
    batch.later(() => add('ended'));
    await expect(batch.commit(() => add('taken'))).rejects.toThrow(/UNIQUE/);
    expect(texts()).toBe('taken');
    await batch.commit();
    expect(texts()).toBe('taken,ended');
  });

  it('refuses a held write that answers a promise: it would land after the transaction', async () => {
    const { add, transaction, texts } = database();
    const batch = createWriteBatch(transaction);
    batch.later(() => add('first'));
    batch.later(() => Promise.resolve().then(() => add('late')));
    await expect(batch.commit()).rejects.toThrow(/at once, not awaited/);
    // The transaction rolled back; the promise's write landed outside it, which is why it is refused.
    expect(texts()).toBe('late');
  });

  it('runs a transaction made inside a commit as a savepoint of it', async () => {
    const { transaction, add, texts } = database();
    const batch = createWriteBatch(transaction);
    batch.later(() => add('held'));
    await batch.commit(() => {
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
