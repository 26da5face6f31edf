import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { StateDb } from '../../src/db/state-db.js';
import { normaliseSql, type TableTriggers } from '../../src/db/table-triggers.js';
import { stateDatabaseFor } from '../support/dialects.js';

/**
 * The triggers on PostgreSQL (issue 34, docs/design/cluster-state.md "Triggers on PostgreSQL"), as
 * test/db/table-triggers.test.ts holds SQLite's: a database with drizzle-pg/ applied holds exactly the trigger
 * functions, triggers and views the `postgres` parts of the `*.triggers.ts` declarations name, with their SQL.
 */
const root = resolve(import.meta.dirname, '../..');

async function declarations(): Promise<TableTriggers[]> {
  const files = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.triggers.ts'))
    .sort();
  const modules = await Promise.all(
    files.map(
      async (file) => (await import(pathToFileURL(join(root, 'src', file)).href)) as Record<string, TableTriggers>,
    ),
  );
  return modules.flatMap((exports) => Object.values(exports));
}

/** What the database holds that the declarations do not say, one sentence each. */
async function differences(db: StateDb, declared: readonly TableTriggers[]): Promise<string[]> {
  const rows = async <Row extends Record<string, unknown>>(query: string) => (await db.execute<Row>(query)).rows;
  const functions = await rows<{ name: string; body: string }>(
    `select p.proname as name, p.prosrc as body from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public' and p.prorettype = 'trigger'::regtype`,
  );
  const triggers = await rows<{ name: string; on: string; sql: string }>(
    `select t.tgname as name, c.relname as on, pg_get_triggerdef(t.oid) as sql from pg_trigger t
      join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
      where not t.tgisinternal and n.nspname = 'public'`,
  );
  const problems: string[] = [];
  const compare = <T extends { name: string }, W extends { name: string }>(
    what: string,
    held: readonly T[],
    wanted: readonly W[],
    same: (a: T, b: W) => string | undefined,
  ) => {
    const left = new Map(wanted.map((object) => [object.name, object]));
    for (const object of held) {
      const declaration = left.get(object.name);
      if (!declaration) problems.push(`the ${what} ${object.name} is not declared`);
      else {
        left.delete(object.name);
        const difference = same(object, declaration);
        if (difference) problems.push(`the ${what} ${object.name} ${difference}`);
      }
    }
    for (const name of left.keys()) problems.push(`the declared ${what} ${name} is not in the database`);
  };
  const postgres = declared.flatMap((d) => (d.postgres ? [d.postgres] : []));
  const views = postgres.flatMap((p) => p.views ?? []);
  compare('view', await viewsHeld(db, views), views, (held) =>
    held.definition === held.declared ? undefined : 'differs from its declaration',
  );
  compare(
    'function',
    functions,
    postgres.flatMap((p) => p.functions),
    (held, wanted) =>
      normaliseSql(held.body) === normaliseSql(wanted.body) ? undefined : 'differs from its declaration',
  );
  compare(
    'trigger',
    triggers,
    postgres.flatMap((p) => p.triggers),
    (held, wanted) =>
      held.on !== wanted.on
        ? `fires on ${held.on}, declared on ${wanted.on}`
        : normaliseSql(held.sql) === normaliseSql(wanted.sql)
          ? undefined
          : 'differs from its declaration',
  );
  return problems;
}

/**
 * The public schema's views, each with what PostgreSQL makes of the declared query of that name (`declared`,
 * from a temporary view made in a transaction rolled back), to compare with its own definition.
 */
async function viewsHeld(
  db: StateDb,
  declared: ReadonlyArray<{ name: string; sql: string }>,
): Promise<{ name: string; definition: string; declared?: string }[]> {
  const held = (
    await db.execute<{ name: string; definition: string }>(
      `select viewname as name, definition from pg_views where schemaname = 'public'`,
    )
  ).rows;
  const made = new Map<string, string>();
  await db
    .transaction(async (tx) => {
      for (const view of declared) {
        if (!held.some((h) => h.name === view.name)) continue;
        await tx.execute(`create temporary view declared_${view.name} as ${view.sql}`);
        const { rows } = await tx.execute<{ definition: string }>(
          `select pg_get_viewdef('pg_temp.declared_${view.name}'::regclass) as definition`,
        );
        made.set(view.name, rows[0]!.definition);
      }
      throw new Rollback();
    })
    .catch((error: unknown) => {
      if (!(error instanceof Rollback)) throw error;
    });
  return held.map((view) => ({ ...view, declared: made.get(view.name) }));
}

describe('SQL triggers on PostgreSQL, declared next to the tables they keep', () => {
  const state = stateDatabaseFor('postgres', 'table-triggers');

  it('the database after all migrations holds the declared trigger functions, triggers and views, and no other', async () => {
    const declared = await declarations();
    expect(declared.filter((d) => d.postgres).map((d) => d.table)).toEqual(
      expect.arrayContaining(['audit_log', 'site_summaries']),
    );
    expect(await differences(state().db, declared)).toEqual([]);
  });

  it('names a trigger or view the declarations lack, a changed function or view, and a missing trigger or view', async () => {
    const declared = await declarations();
    await state()
      .transaction(async (tx) => {
        await tx.execute(
          `create function sites_touched() returns trigger language plpgsql as $$ begin return new; end $$`,
        );
        await tx.execute(
          `create trigger sites_touched before update on sites for each row execute function sites_touched()`,
        );
        await tx.execute(
          `create or replace function audit_log_append_only() returns trigger language plpgsql as $$ begin return old; end $$`,
        );
        await tx.execute('drop trigger audit_log_append_only on audit_log');
        await tx.execute('create view sites_named as select id, name from sites');
        await tx.execute('drop view site_summary_scores');
        await tx.execute(
          `create or replace view site_uptime_figures as select site_id, uptime_24h, uptime_30d, cast(response_ms as bigint) from site_summaries`,
        );
        expect((await differences(tx, declared)).sort()).toEqual([
          'the declared trigger audit_log_append_only is not in the database',
          'the declared view site_summary_scores is not in the database',
          'the function audit_log_append_only differs from its declaration',
          'the function sites_touched is not declared',
          'the trigger sites_touched is not declared',
          'the view site_uptime_figures differs from its declaration',
          'the view sites_named is not declared',
        ]);
        // (undone: the database stays as migrated for the other tests)
        throw new Rollback();
      })
      .catch((error: unknown) => {
        if (!(error instanceof Rollback)) throw error;
      });
    expect(await differences(state().db, declared)).toEqual([]);
  });
});

class Rollback extends Error {}
