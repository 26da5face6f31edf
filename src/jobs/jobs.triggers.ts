import { tableTriggers } from '../db/table-triggers.js';

/** One feature table's delete trigger: its row's job row goes with it. */
const jobRowGoesWith = (table: string, onModule: string) => ({
  name: `${table}_job_delete`,
  on: table,
  onModule,
  sql: `CREATE TRIGGER \`${table}_job_delete\` AFTER DELETE ON \`${table}\` BEGIN
	DELETE FROM \`jobs\` WHERE \`id\` = old.id;
END`,
});

/** The same on PostgreSQL: the deleted rows of one statement as a transition table, their job rows in one delete. */
const jobRowFollowsOnPostgres = (table: string) => ({
  name: `${table}_job_delete`,
  on: table,
  sql: `CREATE TRIGGER ${table}_job_delete AFTER DELETE ON public.${table} REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION job_rows_follow_feature()`,
});

/**
 * The triggers that take a job row (jobs.table.ts) with the feature row that shares its id, when a
 * backup, restore, audit or safe update is deleted (retention, or its site removed by cascade): the
 * only triggers on `jobs` left since the job runner writes every job row (0033, 0034; docs/jobs.md).
 * The source of truth for what the database holds after all migrations (0007 and 0015 create them;
 * test/db/table-triggers.test.ts keeps the two equal).
 */
export const jobRowsDeletedTriggers = tableTriggers({
  table: 'jobs',
  module: 'jobs/',
  what: 'a job row deleted with the backup, restore, audit or safe update whose id it shares',
  views: [],
  triggers: [
    jobRowGoesWith('backups', 'backups/'),
    jobRowGoesWith('restores', 'backups/'),
    jobRowGoesWith('performance_audits', 'performance/'),
    jobRowGoesWith('safe_updates', 'safe-updates/'),
  ],
  // drizzle-pg/0009, 0013 and 0019: one function, a statement-level trigger per feature table as it reaches PostgreSQL.
  postgres: {
    functions: [
      {
        name: 'job_rows_follow_feature',
        body: `
BEGIN
  DELETE FROM jobs WHERE id IN (SELECT id FROM gone);
  RETURN NULL;
END
`,
      },
    ],
    triggers: [
      jobRowFollowsOnPostgres('backups'),
      jobRowFollowsOnPostgres('restores'),
      jobRowFollowsOnPostgres('performance_audits'),
      jobRowFollowsOnPostgres('safe_updates'),
    ],
  },
});
