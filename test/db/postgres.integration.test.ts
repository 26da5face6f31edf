import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, expectTypeOf, inject, it } from 'vitest';
import { jobs as pgJobs } from '../../src/jobs/jobs.pg-table.js';
import type { JobRow, NewJobRow } from '../../src/jobs/jobs.table.js';
import { createTestDatabase, testPool } from '../support/postgres.js';

/**
 * The PostgreSQL dialect's first table (issue 34), on the run's throwaway cluster
 * (test/support/postgres.ts): drizzle-pg/ applied with drizzle's node-postgres migrator, job rows
 * written and read through drizzle, and what PostgreSQL holds checked in SQL.
 */
const migrationsFolder = resolve(import.meta.dirname, '../../drizzle-pg');
const journal = JSON.parse(readFileSync(resolve(migrationsFolder, 'meta/_journal.json'), 'utf8')) as {
  entries: { tag: string }[];
};

const databases: Array<{ drop(): Promise<void> }> = [];
const pools: pg.Pool[] = [];

/** A fresh database of the cluster, its sessions in a time zone far from UTC (+13:45) so no offset goes unnoticed. */
async function freshDatabase(label: string): Promise<{ pool: pg.Pool; db: NodePgDatabase }> {
  const database = await createTestDatabase(inject('postgresUrl'), label);
  databases.push(database);
  const pool = testPool({ connectionString: database.url, max: 2, options: '-c timezone=Pacific/Chatham' });
  pools.push(pool);
  return { pool, db: drizzle(pool) };
}

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
  await Promise.all(databases.map((database) => database.drop()));
});

describe('the jobs table on PostgreSQL', () => {
  let pool: pg.Pool;
  let db: NodePgDatabase;

  beforeAll(async () => {
    ({ pool, db } = await freshDatabase('jobs-table'));
    await migrate(db, { migrationsFolder });
  });

  it('has the SQLite table’s row types, so a repository reads and writes the same rows on both', () => {
    expectTypeOf<typeof pgJobs.$inferSelect>().toEqualTypeOf<JobRow>();
    expectTypeOf<typeof pgJobs.$inferInsert>().toEqualTypeOf<NewJobRow>();
  });

  it('round-trips a Date to the millisecond and a JSON object, and PostgreSQL holds them as timestamptz and jsonb', async () => {
    const createdAt = new Date(Date.UTC(2026, 10, 28, 5, 59, 58, 987));
    const startedAt = new Date(Date.UTC(2026, 10, 28, 6, 0, 0, 1));
    const params = { siteIds: ['s1', 's2'], nested: { count: 3, ratio: 0.25, ok: true, none: null }, name: 'Größe ✓' };
    const progress = { done: 1, total: 2 };
    await db.insert(pgJobs).values({
      id: 'job-1',
      kind: 'backup',
      siteId: 's1',
      state: 'running',
      params: JSON.stringify(params),
      progress: JSON.stringify(progress),
      attempts: 1,
      createdAt,
      startedAt,
    });

    const [row] = await db.select().from(pgJobs).where(eq(pgJobs.id, 'job-1'));
    expect(row).toBeDefined();
    expect(row!.createdAt).toBeInstanceOf(Date);
    expect(row!.createdAt.getTime()).toBe(createdAt.getTime());
    expect(row!.startedAt?.getTime()).toBe(startedAt.getTime());
    expect(row!.finishedAt).toBeNull();
    expect(JSON.parse(row!.params)).toStrictEqual(params);
    expect(JSON.parse(row!.progress)).toStrictEqual(progress);
    expect(row).toMatchObject({ kind: 'backup', siteId: 's1', state: 'running', attempts: 1, reason: null });

    // A page's cursor (createdAt, id) finds the row it came from: stored milliseconds, not more.
    const byCursor = await db
      .select({ id: pgJobs.id })
      .from(pgJobs)
      .where(and(eq(pgJobs.createdAt, row!.createdAt), eq(pgJobs.id, row!.id)));
    expect(byCursor).toEqual([{ id: 'job-1' }]);

    // What PostgreSQL holds, read in SQL: the instant, whatever the session's time zone, and JSON values.
    const held = await pool.query<{
      instant: boolean;
      epoch_ms: string;
      created_type: string;
      params_type: string;
      second_site: string;
      ratio: string;
      name: string;
    }>(
      `select created_at = '2026-11-28T05:59:58.987Z'::timestamptz as instant,
              (extract(epoch from created_at) * 1000)::bigint::text as epoch_ms,
              pg_typeof(created_at)::text as created_type, jsonb_typeof(params) as params_type,
              params #>> '{siteIds,1}' as second_site, params #>> '{nested,ratio}' as ratio, params ->> 'name' as name
       from jobs where id = 'job-1'`,
    );
    expect(held.rows).toEqual([
      {
        instant: true,
        epoch_ms: String(createdAt.getTime()),
        created_type: 'timestamp with time zone',
        params_type: 'object',
        second_site: 's2',
        ratio: '0.25',
        name: 'Größe ✓',
      },
    ]);
  });

  it('gives a new row the SQLite table’s defaults', async () => {
    await db.insert(pgJobs).values({ id: 'job-2', kind: 'audit', state: 'queued', createdAt: new Date(1_000) });
    const [row] = await db.select().from(pgJobs).where(eq(pgJobs.id, 'job-2'));
    expect(row).toMatchObject({ params: '{}', progress: '{}', attempts: 0, siteId: null, startedAt: null });
  });

  it('refuses params that are not JSON', async () => {
    await expect(
      db
        .insert(pgJobs)
        .values({ id: 'job-3', kind: 'audit', state: 'queued', params: '{not json', createdAt: new Date() }),
    ).rejects.toThrow();
    const { rows } = await pool.query(`select id from jobs where id = 'job-3'`);
    expect(rows).toEqual([]);
  });

  it('has the SQLite table’s indexes', async () => {
    const { rows } = await pool.query<{ indexname: string; indexdef: string }>(
      `select indexname, indexdef from pg_indexes where schemaname = 'public' and tablename = 'jobs' order by indexname`,
    );
    expect(rows.map((index) => [index.indexname, index.indexdef.replace(/^.* USING /, '')])).toEqual([
      ['jobs_created_idx', 'btree (created_at, id)'],
      ['jobs_pkey', 'btree (id)'],
      ['jobs_site_idx', 'btree (site_id, created_at)'],
      ['jobs_state_idx', 'btree (state, kind)'],
    ]);
  });
});

describe('drizzle-pg/ migrations', () => {
  /** The tables, columns and indexes of the database's public schema, and the migrations it records. */
  async function schemaOf(pool: pg.Pool) {
    const columns = await pool.query(
      `select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns
       where table_schema = 'public' order by table_name, ordinal_position`,
    );
    const indexes = await pool.query(
      `select indexname, indexdef from pg_indexes where schemaname = 'public' order by indexname`,
    );
    const applied = await pool.query<{ hash: string }>(`select hash from drizzle.__drizzle_migrations order by id`);
    return { columns: columns.rows, indexes: indexes.rows, applied: applied.rows.map((row) => row.hash) };
  }

  it('apply once: a second run over a migrated database changes nothing and keeps its rows', async () => {
    const { pool, db } = await freshDatabase('migrate-twice');
    await migrate(db, { migrationsFolder });
    const once = await schemaOf(pool);
    expect(once.applied).toHaveLength(journal.entries.length);
    expect(once.columns.length).toBeGreaterThan(0);
    await db.insert(pgJobs).values({ id: 'kept', kind: 'backup', state: 'succeeded', createdAt: new Date(5) });

    await migrate(db, { migrationsFolder });
    await migrate(db, { migrationsFolder });

    expect(await schemaOf(pool)).toEqual(once);
    expect(await db.select({ id: pgJobs.id }).from(pgJobs)).toEqual([{ id: 'kept' }]);
    // Applied in one pass each time: nothing (no `create table` without `if not exists`) ran again.
    const { rows } = await pool.query(`select count(*)::int as n from drizzle.__drizzle_migrations`);
    expect(rows).toEqual([{ n: journal.entries.length }]);
  });
});
