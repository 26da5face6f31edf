import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type Database from 'better-sqlite3';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { auditLogTriggers } from '../../src/audit/audit-log.triggers.js';
import { siteSummariesTriggers } from '../../src/dashboard/site-summaries.triggers.js';
import { normaliseSql, type TableTriggers } from '../../src/db/table-triggers.js';
import { fleetItemTotalsTriggers } from '../../src/fleet/fleet.triggers.js';
import { jobRowsDeletedTriggers } from '../../src/jobs/jobs.triggers.js';
import { layerSection, triggerDeclarations } from '../../scripts/architecture-doc.mjs';

/**
 * The triggers no lint sees (issue 35): each read model's triggers, and the views they read, are
 * declared next to its table (`src/**\/*.triggers.ts`), and the database after all migrations holds
 * exactly those, with the same SQL. A migration that adds, drops or changes a trigger without its
 * declaration (or a declaration without its migration) fails here.
 */
const root = resolve(import.meta.dirname, '../..');

/** Every `*.triggers.ts` of src/ and its one export. */
async function declarations(): Promise<Array<{ file: string; declaration: TableTriggers }>> {
  const files = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.triggers.ts'))
    .sort();
  return Promise.all(
    files.map(async (file) => {
      const exports = Object.values(
        (await import(pathToFileURL(join(root, 'src', file)).href)) as Record<string, TableTriggers>,
      );
      expect(exports, `${file} exports one declaration`).toHaveLength(1);
      return { file, declaration: exports[0]! };
    }),
  );
}

/** What the database holds that its declarations do not say, one sentence each. */
function differences(sqlite: Database.Database, declared: readonly TableTriggers[]): string[] {
  const held = sqlite
    .prepare("select type, name, tbl_name as 'on', sql from sqlite_master where type in ('trigger', 'view')")
    .all() as Array<{ type: 'trigger' | 'view'; name: string; on: string; sql: string }>;
  const wanted = new Map<string, { type: 'trigger' | 'view'; on?: string; sql: string }>();
  for (const d of declared) {
    for (const view of d.views) wanted.set(view.name, { type: 'view', sql: view.sql });
    for (const trigger of d.triggers) wanted.set(trigger.name, { type: 'trigger', on: trigger.on, sql: trigger.sql });
  }
  const problems: string[] = [];
  for (const object of held) {
    const declaration = wanted.get(object.name);
    if (!declaration) {
      problems.push(`the ${object.type} ${object.name} on ${object.on} is not declared`);
      continue;
    }
    wanted.delete(object.name);
    if (declaration.type !== object.type)
      problems.push(`${object.name} is a ${object.type}, declared a ${declaration.type}`);
    else if (declaration.on !== undefined && declaration.on !== object.on)
      problems.push(`the trigger ${object.name} fires on ${object.on}, declared on ${declaration.on}`);
    else if (normaliseSql(object.sql) !== normaliseSql(declaration.sql))
      problems.push(`the ${object.type} ${object.name} differs from its declaration`);
  }
  for (const [name, { type }] of wanted) problems.push(`the declared ${type} ${name} is not in the database`);
  return problems;
}

/** The tables a module's `*.table.ts` files declare (`sqliteTable('name'`). */
function tablesOf(module: string): string[] {
  const dir = join(root, 'src', module);
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.table.ts'))
    .flatMap((file) => [...readFileSync(join(dir, file), 'utf8').matchAll(/sqliteTable\(\s*'([a-z0-9_]+)'/g)])
    .map((match) => match[1]!);
}

describe('SQL triggers, declared next to the tables they keep', () => {
  let found: Array<{ file: string; declaration: TableTriggers }>;
  let database: DatabaseHandle;
  beforeAll(async () => {
    found = await declarations();
  });
  afterEach(() => database?.close());
  const declared = () => found.map((f) => f.declaration);

  it('the database after all migrations holds the declared triggers and views, with their SQL, and no other', () => {
    database = openDatabase(':memory:');
    // Every declaration is found by its file name, as npm run docs:architecture finds them.
    expect(found.map((f) => f.file)).toEqual([
      'audit/audit-log.triggers.ts',
      'dashboard/site-summaries.triggers.ts',
      'fleet/fleet.triggers.ts',
      'jobs/jobs.triggers.ts',
    ]);
    expect(declared()).toEqual([
      auditLogTriggers,
      siteSummariesTriggers,
      fleetItemTotalsTriggers,
      jobRowsDeletedTriggers,
    ]);
    expect(differences(database.sqlite, declared())).toEqual([]);
    const names = declared().flatMap((d) => [...d.views, ...d.triggers].map((o) => o.name));
    expect(new Set(names).size, 'each name declared once').toBe(names.length);
  });

  it('names a trigger the declarations lack, a changed one, a missing one and a view nobody declared', () => {
    database = openDatabase(':memory:');
    const { sqlite } = database;
    sqlite.exec(`CREATE TRIGGER site_summaries_probe_insert AFTER INSERT ON uptime_probes BEGIN
      UPDATE site_summaries SET response_ms = new.response_ms WHERE site_id = new.site_id; END`);
    sqlite.exec('DROP TRIGGER site_summaries_monitor_delete');
    sqlite.exec(`CREATE TRIGGER site_summaries_monitor_delete AFTER DELETE ON uptime_monitors BEGIN
      UPDATE site_summaries SET uptime_status = 'down' WHERE site_id = old.site_id; END`);
    sqlite.exec('DROP TRIGGER fleet_item_uncounted');
    sqlite.exec('CREATE VIEW site_names AS SELECT site_id, sort_name FROM site_summaries');
    expect(differences(sqlite, declared()).sort()).toEqual([
      'the declared trigger fleet_item_uncounted is not in the database',
      'the trigger site_summaries_monitor_delete differs from its declaration',
      'the trigger site_summaries_probe_insert on uptime_probes is not declared',
      'the view site_names on site_names is not declared',
    ]);
  });

  it('forgives only layout and identifier quotes when comparing SQL', () => {
    expect(normaliseSql('CREATE TRIGGER `a` AFTER INSERT ON `b`\n\tBEGIN\n  SELECT ( 1 , 2 );\nEND;')).toBe(
      'CREATE TRIGGER a AFTER INSERT ON b BEGIN SELECT (1, 2); END',
    );
    expect(normaliseSql("SELECT 'Up'")).not.toBe(normaliseSql("SELECT 'up'"));
    expect(normaliseSql('SELECT a - 1')).not.toBe(normaliseSql('SELECT a + 1'));
  });

  it('each declaration names its table and the watched tables in the modules that declare them', () => {
    for (const { file, declaration } of found) {
      expect(file.startsWith(declaration.module), file).toBe(true);
      expect(tablesOf(declaration.module), file).toContain(declaration.table);
      for (const trigger of declaration.triggers) {
        expect(tablesOf(trigger.onModule), trigger.name).toContain(trigger.on);
        expect(normaliseSql(trigger.sql), trigger.name).toMatch(
          new RegExp(`^CREATE TRIGGER ${trigger.name} .*\\bON ${trigger.on}\\b`),
        );
      }
    }
  });

  it('docs/architecture.md names each table, its triggers, and draws the coupling from each watched module', async () => {
    const fromScript = await triggerDeclarations();
    expect(fromScript.map((d) => d.table)).toEqual(declared().map((d) => d.table));
    const section = layerSection([], fromScript);
    for (const d of declared()) {
      const row = section.split('\n').find((line) => line.startsWith(`| \`${d.table}\` | \`${d.module}\` |`));
      expect(row, d.table).toBeDefined();
      for (const o of [...d.triggers, ...d.views]) expect(row, o.name).toContain(`\`${o.name}\``);
    }
    const diagram = /```mermaid\n([\s\S]*?)```/.exec(section)![1]!;
    expect(diagram).toContain('table_site_summaries[("site_summaries · dashboard")]');
    expect(diagram).toContain('uptime -.->|"uptime_monitors, uptime_hourly, uptime_daily"| table_site_summaries');
    expect(diagram).toContain('inventory -.->|"inventory_items"| table_fleet_item_totals');
    expect(diagram).toContain('audit -.->|"audit_log"| table_audit_log');
    expect(diagram).toContain('backups -.->|"backups, restores"| table_jobs');
  }, 120_000);

  it('the uptime figures are written once: in the view site_uptime_figures, in no trigger', () => {
    const summaries = found.find((f) => f.declaration.table === 'site_summaries')!.declaration;
    const subquery = /FROM uptime_hourly n WHERE n\.site_id =/g;
    const view = summaries.views.find((v) => v.name === 'site_uptime_figures')!;
    expect(normaliseSql(view.sql).match(subquery)).toHaveLength(3);
    for (const trigger of declared().flatMap((d) => d.triggers))
      expect(normaliseSql(trigger.sql), trigger.name).not.toMatch(/FROM uptime_(hourly|daily) [a-z] WHERE/);
    const rollups = summaries.triggers.filter((t) => t.on === 'uptime_hourly' || t.on === 'uptime_daily');
    expect(rollups.map((t) => t.name)).toEqual([
      'site_summaries_hourly_insert',
      'site_summaries_hourly_update',
      'site_summaries_daily_insert',
      'site_summaries_daily_update',
    ]);
    for (const trigger of rollups) expect(trigger.sql, trigger.name).toContain('FROM site_uptime_figures f');
  });
});
