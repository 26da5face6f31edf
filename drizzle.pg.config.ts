import { defineConfig } from 'drizzle-kit';

/**
 * The PostgreSQL dialect (issue 34; docs/design/cluster-state.md): each feature's tables for it in a
 * `*.pg-table.ts` beside its SQLite `*.table.ts`; migrations in drizzle-pg/. drizzle.config.ts is the
 * SQLite dialect's (drizzle/). Generate with `npx drizzle-kit generate --config drizzle.pg.config.ts`.
 */
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/**/*.pg-table.ts',
  out: './drizzle-pg',
});
