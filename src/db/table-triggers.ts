/**
 * SQL triggers (and the views their bodies read) declared next to the table they keep, in a
 * `*.triggers.ts` file beside its `*.table.ts` (issue 35): drizzle-kit generates neither, so each
 * is created by a hand-written migration, and the declaration is the source of truth for what the
 * database holds after all migrations. test/db/table-triggers.test.ts fails when the migrated
 * database holds a trigger these declarations do not name, or one whose SQL differs from its
 * declaration; `npm run docs:architecture` draws each declaration's couplings (a watched table's
 * module → the kept table) in docs/architecture.md.
 */
export interface TableTriggers {
  /** The table the triggers keep (a read model) or guard. */
  table: string;
  /** The module of src/ the table is declared in (`dashboard/`), as scripts/layers.cjs names it. */
  module: string;
  /** What they do, one line for docs/architecture.md. */
  what: string;
  /** Views the trigger bodies read, created by the same migrations. */
  views: ReadonlyArray<{
    name: string;
    /** `CREATE VIEW …` as sqlite_master holds it (compared after `normaliseSql`). */
    sql: string;
  }>;
  triggers: ReadonlyArray<{
    name: string;
    /** The table it fires on, and that table's module of src/ (`uptime/`). */
    on: string;
    onModule: string;
    /** `CREATE TRIGGER … END` as sqlite_master holds it (compared after `normaliseSql`). */
    sql: string;
  }>;
  /**
   * The same guarantee on PostgreSQL (issue 34, docs/design/cluster-state.md "Triggers on PostgreSQL"), created
   * by drizzle-kit `--custom` migrations in drizzle-pg/ once the tables are there: the trigger functions and the
   * triggers that execute them. Absent while the table has no PostgreSQL definition yet.
   */
  postgres?: {
    /**
     * Views the trigger functions read: each one's query as its migration writes it (`SELECT …`), compared by
     * what PostgreSQL makes of it (`pg_get_viewdef` of the view and of the declared query).
     */
    views?: ReadonlyArray<{ name: string; sql: string }>;
    /** A PL/pgSQL trigger function: its body as pg_proc holds it (`prosrc`, compared after `normaliseSql`). */
    functions: ReadonlyArray<{ name: string; body: string }>;
    /** `CREATE TRIGGER …` as `pg_get_triggerdef` gives it (compared after `normaliseSql`). */
    triggers: ReadonlyArray<{ name: string; on: string; sql: string }>;
  };
}

/** The declaration, frozen: a triggers file's one export. */
export function tableTriggers(declaration: TableTriggers): Readonly<TableTriggers> {
  return Object.freeze(declaration);
}

/**
 * SQL as compared between a declaration and sqlite_master: a plain identifier's backquotes dropped
 * (`sites` is sites), runs of white space made one space, none inside parentheses' edges or before a
 * comma, no trailing semicolon. SQLite keeps a CREATE statement's text as written, so this forgives
 * only quoting and layout.
 */
export function normaliseSql(sql: string): string {
  return sql
    .replace(/`([A-Za-z_][A-Za-z0-9_]*)`/g, '$1')
    .replace(/\s+/g, ' ')
    .replace(/\(\s+/g, '(')
    .replace(/\s+\)/g, ')')
    .replace(/\s+,/g, ',')
    .replace(/;\s*$/, '')
    .trim();
}
