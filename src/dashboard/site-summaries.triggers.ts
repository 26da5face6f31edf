import { tableTriggers } from '../db/table-triggers.js';

/**
 * A row trigger of the PostgreSQL part, as `pg_get_triggerdef` prints it: `event` as in `AFTER <event> ON`,
 * `when` its condition as PostgreSQL prints it back (lower-case `new` and `old`, casts written out).
 */
const onPostgres = (name: string, on: string, event: string, fn: string, when?: string) => ({
  name,
  on,
  sql: `CREATE TRIGGER ${name} AFTER ${event} ON public.${on} FOR EACH ROW ${when ? `WHEN (${when}) ` : ''}EXECUTE FUNCTION ${fn}()`,
});

/**
 * The triggers that keep `site_summaries` (site-summaries.table.ts), the overview's read model, and
 * the views they read: the source of truth for what the database holds after all migrations
 * (0016, 0025 and 0032 create them; test/db/table-triggers.test.ts keeps the two equal). Each fact
 * follows its feature's own table in the same transaction: the site (sites/), its monitor and its
 * hourly and daily uptime roll-ups (uptime/), its completed performance audits (performance/), its
 * backups (backups/) and its inventory rows offering an update (inventory/).
 *
 * The uptime figures (24 h, 30 d, response time) are computed once, by the view
 * `site_uptime_figures`; the four roll-up triggers each copy its row into the summary.
 *
 * On PostgreSQL (issue 34; drizzle-pg/0015, test/db/table-triggers.integration.test.ts) the same twenty
 * row triggers by name and the same two views, a trigger function per fact. Two transactions may write one
 * site's rows at once there: the pending updates move by increments (each item that starts or stops offering
 * one counts once, however many rows a statement writes), and the figures, the score and the last backup are
 * read again only after the summary row is locked, so the later of two writers reads what the earlier
 * committed (a function's next statement takes a new snapshot at READ COMMITTED).
 */
export const siteSummariesTriggers = tableTriggers({
  table: 'site_summaries',
  module: 'dashboard/',
  what: "the fleet overview's one row per site: name, state, uptime status and figures, score, pending updates, last backup",
  views: [
    {
      name: 'site_summary_scores',
      sql: `CREATE VIEW site_summary_scores AS
  SELECT s.site_id, coalesce(
    (SELECT a.score_performance FROM performance_audits a
      WHERE a.site_id = s.site_id AND a.form_factor = 'mobile' AND a.status = 'completed' ORDER BY a.id DESC LIMIT 1),
    (SELECT a.score_performance FROM performance_audits a
      WHERE a.site_id = s.site_id AND a.form_factor = 'desktop' AND a.status = 'completed' ORDER BY a.id DESC LIMIT 1)
  ) AS score
  FROM site_summaries s`,
    },
    {
      name: 'site_uptime_figures',
      sql: `CREATE VIEW site_uptime_figures AS
  SELECT s.site_id,
    (SELECT CASE WHEN sum(h.up + h.down) > 0 THEN 1.0 * sum(h.up) / sum(h.up + h.down) END FROM uptime_hourly h
      WHERE h.site_id = s.site_id AND h.bucket > (SELECT max(n.bucket) FROM uptime_hourly n WHERE n.site_id = s.site_id) - 86400000) AS uptime_24h,
    (SELECT CASE WHEN sum(r.up + r.down) > 0 THEN 1.0 * sum(r.up) / sum(r.up + r.down) END FROM (
        SELECT d.up, d.down FROM uptime_daily d WHERE d.site_id = s.site_id
          AND d.bucket > (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = s.site_id) - 2592000000
        UNION ALL
        SELECT h.up, h.down FROM uptime_hourly h WHERE h.site_id = s.site_id
          AND h.bucket >= (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = s.site_id)) r) AS uptime_30d,
    (SELECT CASE WHEN h.response_count > 0 THEN h.response_sum / h.response_count END FROM uptime_hourly h
      WHERE h.site_id = s.site_id ORDER BY h.bucket DESC LIMIT 1) AS response_ms
  FROM site_summaries s`,
    },
  ],
  triggers: [
    {
      name: 'site_summaries_site_insert',
      on: 'sites',
      onModule: 'sites/',
      sql: `CREATE TRIGGER site_summaries_site_insert AFTER INSERT ON sites BEGIN
  INSERT INTO site_summaries (site_id, sort_name, state, sync_failing)
    VALUES (new.id, lower(coalesce(new.name, new.url)), new.state, new.sync_error IS NOT NULL)
    ON CONFLICT (site_id) DO UPDATE SET sort_name = excluded.sort_name, state = excluded.state, sync_failing = excluded.sync_failing;
END`,
    },
    {
      name: 'site_summaries_site_update',
      on: 'sites',
      onModule: 'sites/',
      sql: `CREATE TRIGGER site_summaries_site_update AFTER UPDATE OF name, url, state, sync_error ON sites BEGIN
  UPDATE site_summaries SET sort_name = lower(coalesce(new.name, new.url)), state = new.state,
    sync_failing = new.sync_error IS NOT NULL WHERE site_id = new.id;
END`,
    },
    {
      name: 'site_summaries_monitor_insert',
      on: 'uptime_monitors',
      onModule: 'uptime/',
      sql: `CREATE TRIGGER site_summaries_monitor_insert AFTER INSERT ON uptime_monitors BEGIN
  UPDATE site_summaries SET uptime_status = new.status WHERE site_id = new.site_id;
END`,
    },
    {
      name: 'site_summaries_monitor_update',
      on: 'uptime_monitors',
      onModule: 'uptime/',
      sql: `CREATE TRIGGER site_summaries_monitor_update AFTER UPDATE OF status ON uptime_monitors BEGIN
  UPDATE site_summaries SET uptime_status = new.status WHERE site_id = new.site_id;
END`,
    },
    {
      name: 'site_summaries_monitor_delete',
      on: 'uptime_monitors',
      onModule: 'uptime/',
      sql: `CREATE TRIGGER site_summaries_monitor_delete AFTER DELETE ON uptime_monitors BEGIN
  UPDATE site_summaries SET uptime_status = 'unknown' WHERE site_id = old.site_id;
END`,
    },
    {
      name: 'site_summaries_hourly_insert',
      on: 'uptime_hourly',
      onModule: 'uptime/',
      sql: `CREATE TRIGGER site_summaries_hourly_insert AFTER INSERT ON uptime_hourly BEGIN
  UPDATE site_summaries SET (uptime_24h, uptime_30d, response_ms) = (SELECT f.uptime_24h, f.uptime_30d, f.response_ms
      FROM site_uptime_figures f WHERE f.site_id = new.site_id)
  WHERE site_id = new.site_id;
END`,
    },
    {
      name: 'site_summaries_hourly_update',
      on: 'uptime_hourly',
      onModule: 'uptime/',
      sql: `CREATE TRIGGER site_summaries_hourly_update AFTER UPDATE ON uptime_hourly BEGIN
  UPDATE site_summaries SET (uptime_24h, uptime_30d, response_ms) = (SELECT f.uptime_24h, f.uptime_30d, f.response_ms
      FROM site_uptime_figures f WHERE f.site_id = new.site_id)
  WHERE site_id = new.site_id;
END`,
    },
    {
      name: 'site_summaries_daily_insert',
      on: 'uptime_daily',
      onModule: 'uptime/',
      sql: `CREATE TRIGGER site_summaries_daily_insert AFTER INSERT ON uptime_daily BEGIN
  UPDATE site_summaries SET (uptime_24h, uptime_30d, response_ms) = (SELECT f.uptime_24h, f.uptime_30d, f.response_ms
      FROM site_uptime_figures f WHERE f.site_id = new.site_id)
  WHERE site_id = new.site_id;
END`,
    },
    {
      name: 'site_summaries_daily_update',
      on: 'uptime_daily',
      onModule: 'uptime/',
      sql: `CREATE TRIGGER site_summaries_daily_update AFTER UPDATE ON uptime_daily BEGIN
  UPDATE site_summaries SET (uptime_24h, uptime_30d, response_ms) = (SELECT f.uptime_24h, f.uptime_30d, f.response_ms
      FROM site_uptime_figures f WHERE f.site_id = new.site_id)
  WHERE site_id = new.site_id;
END`,
    },
    {
      name: 'site_summaries_audit_insert',
      on: 'performance_audits',
      onModule: 'performance/',
      sql: `CREATE TRIGGER site_summaries_audit_insert AFTER INSERT ON performance_audits WHEN new.status = 'completed' BEGIN
  UPDATE site_summaries SET score = (SELECT v.score FROM site_summary_scores v WHERE v.site_id = new.site_id)
  WHERE site_id = new.site_id;
END`,
    },
    {
      name: 'site_summaries_audit_update',
      on: 'performance_audits',
      onModule: 'performance/',
      sql: `CREATE TRIGGER site_summaries_audit_update AFTER UPDATE OF status, score_performance ON performance_audits WHEN new.status = 'completed' OR old.status = 'completed' BEGIN
  UPDATE site_summaries SET score = (SELECT v.score FROM site_summary_scores v WHERE v.site_id = new.site_id)
  WHERE site_id = new.site_id;
END`,
    },
    {
      name: 'site_summaries_audit_delete',
      on: 'performance_audits',
      onModule: 'performance/',
      sql: `CREATE TRIGGER site_summaries_audit_delete AFTER DELETE ON performance_audits WHEN old.status = 'completed' BEGIN
  UPDATE site_summaries SET score = (SELECT v.score FROM site_summary_scores v WHERE v.site_id = old.site_id)
  WHERE site_id = old.site_id;
END`,
    },
    {
      name: 'site_summaries_backup_insert',
      on: 'backups',
      onModule: 'backups/',
      sql: `CREATE TRIGGER site_summaries_backup_insert AFTER INSERT ON backups BEGIN
  UPDATE site_summaries SET (backup_status, backup_at) = (SELECT b.status, coalesce(b.finished_at, b.created_at)
      FROM backups b WHERE b.site_id = new.site_id ORDER BY b.id DESC LIMIT 1)
  WHERE site_id = new.site_id;
END`,
    },
    {
      name: 'site_summaries_backup_update',
      on: 'backups',
      onModule: 'backups/',
      sql: `CREATE TRIGGER site_summaries_backup_update AFTER UPDATE OF status, created_at, finished_at ON backups BEGIN
  UPDATE site_summaries SET (backup_status, backup_at) = (SELECT b.status, coalesce(b.finished_at, b.created_at)
      FROM backups b WHERE b.site_id = new.site_id ORDER BY b.id DESC LIMIT 1)
  WHERE site_id = new.site_id;
END`,
    },
    {
      name: 'site_summaries_backup_delete',
      on: 'backups',
      onModule: 'backups/',
      sql: `CREATE TRIGGER site_summaries_backup_delete AFTER DELETE ON backups BEGIN
  UPDATE site_summaries SET (backup_status, backup_at) = (SELECT b.status, coalesce(b.finished_at, b.created_at)
      FROM backups b WHERE b.site_id = old.site_id ORDER BY b.id DESC LIMIT 1)
  WHERE site_id = old.site_id;
END`,
    },
    {
      name: 'site_summaries_inventory_insert',
      on: 'inventory_items',
      onModule: 'inventory/',
      sql: `CREATE TRIGGER site_summaries_inventory_insert AFTER INSERT ON inventory_items WHEN new.update_version IS NOT NULL BEGIN
  UPDATE site_summaries SET updates = (SELECT count(*) FROM inventory_items i
      WHERE i.site_id = new.site_id AND i.update_version IS NOT NULL)
  WHERE site_id = new.site_id;
END`,
    },
    {
      name: 'site_summaries_inventory_update',
      on: 'inventory_items',
      onModule: 'inventory/',
      sql: `CREATE TRIGGER site_summaries_inventory_update AFTER UPDATE OF update_version ON inventory_items WHEN old.update_version IS NOT new.update_version BEGIN
  UPDATE site_summaries SET updates = (SELECT count(*) FROM inventory_items i
      WHERE i.site_id = new.site_id AND i.update_version IS NOT NULL)
  WHERE site_id = new.site_id;
END`,
    },
    {
      name: 'site_summaries_inventory_delete',
      on: 'inventory_items',
      onModule: 'inventory/',
      sql: `CREATE TRIGGER site_summaries_inventory_delete AFTER DELETE ON inventory_items WHEN old.update_version IS NOT NULL BEGIN
  UPDATE site_summaries SET updates = (SELECT count(*) FROM inventory_items i
      WHERE i.site_id = old.site_id AND i.update_version IS NOT NULL)
  WHERE site_id = old.site_id;
END`,
    },
  ],
  // drizzle-pg/0015: the same twenty triggers by name, a function per fact; the views as the migration writes them.
  postgres: {
    views: [
      {
        name: 'site_summary_scores',
        sql: `  SELECT s.site_id, coalesce(
    (SELECT a.score_performance FROM performance_audits a
      WHERE a.site_id = s.site_id AND a.form_factor = 'mobile' AND a.status = 'completed' ORDER BY a.id DESC LIMIT 1),
    (SELECT a.score_performance FROM performance_audits a
      WHERE a.site_id = s.site_id AND a.form_factor = 'desktop' AND a.status = 'completed' ORDER BY a.id DESC LIMIT 1)
  ) AS score
  FROM site_summaries s`,
      },
      {
        name: 'site_uptime_figures',
        sql: `  SELECT s.site_id,
    (SELECT CASE WHEN sum(h.up + h.down) > 0 THEN cast(sum(h.up) AS double precision) / sum(h.up + h.down) END FROM uptime_hourly h
      WHERE h.site_id = s.site_id AND h.bucket > (SELECT max(n.bucket) FROM uptime_hourly n WHERE n.site_id = s.site_id) - 86400000) AS uptime_24h,
    (SELECT CASE WHEN sum(r.up + r.down) > 0 THEN cast(sum(r.up) AS double precision) / sum(r.up + r.down) END FROM (
        SELECT d.up, d.down FROM uptime_daily d WHERE d.site_id = s.site_id
          AND d.bucket > (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = s.site_id) - 2592000000
        UNION ALL
        SELECT h.up, h.down FROM uptime_hourly h WHERE h.site_id = s.site_id
          AND h.bucket >= (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = s.site_id)) r) AS uptime_30d,
    (SELECT CASE WHEN h.response_count > 0 THEN h.response_sum / h.response_count END FROM uptime_hourly h
      WHERE h.site_id = s.site_id ORDER BY h.bucket DESC LIMIT 1) AS response_ms
  FROM site_summaries s`,
      },
    ],
    functions: [
      {
        name: 'site_summaries_site',
        body: `
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO site_summaries (site_id, sort_name, state, sync_failing)
      VALUES (NEW.id, lower(coalesce(NEW.name, NEW.url)), NEW.state, NEW.sync_error IS NOT NULL)
      ON CONFLICT (site_id) DO UPDATE SET sort_name = excluded.sort_name, state = excluded.state, sync_failing = excluded.sync_failing;
  ELSE
    UPDATE site_summaries SET sort_name = lower(coalesce(NEW.name, NEW.url)), state = NEW.state,
      sync_failing = NEW.sync_error IS NOT NULL WHERE site_id = NEW.id;
  END IF;
  RETURN NULL;
END
`,
      },
      {
        name: 'site_summaries_uptime_status',
        body: `
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE site_summaries SET uptime_status = 'unknown' WHERE site_id = OLD.site_id;
  ELSE
    UPDATE site_summaries SET uptime_status = NEW.status WHERE site_id = NEW.site_id;
  END IF;
  RETURN NULL;
END
`,
      },
      {
        name: 'site_summaries_uptime_figures',
        body: `
BEGIN
  PERFORM FROM site_summaries WHERE site_id = NEW.site_id FOR NO KEY UPDATE;
  UPDATE site_summaries SET (uptime_24h, uptime_30d, response_ms) = (SELECT f.uptime_24h, f.uptime_30d, f.response_ms
      FROM site_uptime_figures f WHERE f.site_id = NEW.site_id)
  WHERE site_id = NEW.site_id;
  RETURN NULL;
END
`,
      },
      {
        name: 'site_summaries_score',
        body: `
DECLARE
  site text := coalesce(NEW.site_id, OLD.site_id);
BEGIN
  PERFORM FROM site_summaries WHERE site_id = site FOR NO KEY UPDATE;
  UPDATE site_summaries SET score = (SELECT v.score FROM site_summary_scores v WHERE v.site_id = site)
  WHERE site_id = site;
  RETURN NULL;
END
`,
      },
      {
        name: 'site_summaries_backup',
        body: `
DECLARE
  site text := coalesce(NEW.site_id, OLD.site_id);
BEGIN
  PERFORM FROM site_summaries WHERE site_id = site FOR NO KEY UPDATE;
  UPDATE site_summaries SET (backup_status, backup_at) = (SELECT b.status,
      cast(extract(epoch FROM coalesce(b.finished_at, b.created_at)) * 1000 AS bigint)
      FROM backups b WHERE b.site_id = site ORDER BY b.id DESC LIMIT 1)
  WHERE site_id = site;
  RETURN NULL;
END
`,
      },
      {
        name: 'site_summaries_updates',
        body: `
BEGIN
  IF TG_OP <> 'INSERT' AND OLD.update_version IS NOT NULL THEN
    UPDATE site_summaries SET updates = updates - 1 WHERE site_id = OLD.site_id;
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.update_version IS NOT NULL THEN
    UPDATE site_summaries SET updates = updates + 1 WHERE site_id = NEW.site_id;
  END IF;
  RETURN NULL;
END
`,
      },
    ],
    triggers: [
      onPostgres('site_summaries_site_insert', 'sites', 'INSERT', 'site_summaries_site'),
      onPostgres(
        'site_summaries_site_update',
        'sites',
        'UPDATE OF name, url, state, sync_error',
        'site_summaries_site',
      ),
      onPostgres('site_summaries_monitor_insert', 'uptime_monitors', 'INSERT', 'site_summaries_uptime_status'),
      onPostgres(
        'site_summaries_monitor_update',
        'uptime_monitors',
        'UPDATE OF status',
        'site_summaries_uptime_status',
      ),
      onPostgres('site_summaries_monitor_delete', 'uptime_monitors', 'DELETE', 'site_summaries_uptime_status'),
      onPostgres('site_summaries_hourly_insert', 'uptime_hourly', 'INSERT', 'site_summaries_uptime_figures'),
      onPostgres('site_summaries_hourly_update', 'uptime_hourly', 'UPDATE', 'site_summaries_uptime_figures'),
      onPostgres('site_summaries_daily_insert', 'uptime_daily', 'INSERT', 'site_summaries_uptime_figures'),
      onPostgres('site_summaries_daily_update', 'uptime_daily', 'UPDATE', 'site_summaries_uptime_figures'),
      onPostgres(
        'site_summaries_audit_insert',
        'performance_audits',
        'INSERT',
        'site_summaries_score',
        "(new.status = 'completed'::text)",
      ),
      onPostgres(
        'site_summaries_audit_update',
        'performance_audits',
        'UPDATE OF status, score_performance',
        'site_summaries_score',
        "((new.status = 'completed'::text) OR (old.status = 'completed'::text))",
      ),
      onPostgres(
        'site_summaries_audit_delete',
        'performance_audits',
        'DELETE',
        'site_summaries_score',
        "(old.status = 'completed'::text)",
      ),
      onPostgres('site_summaries_backup_insert', 'backups', 'INSERT', 'site_summaries_backup'),
      onPostgres(
        'site_summaries_backup_update',
        'backups',
        'UPDATE OF status, created_at, finished_at',
        'site_summaries_backup',
      ),
      onPostgres('site_summaries_backup_delete', 'backups', 'DELETE', 'site_summaries_backup'),
      onPostgres(
        'site_summaries_inventory_insert',
        'inventory_items',
        'INSERT',
        'site_summaries_updates',
        '(new.update_version IS NOT NULL)',
      ),
      onPostgres(
        'site_summaries_inventory_update',
        'inventory_items',
        'UPDATE OF update_version',
        'site_summaries_updates',
        '((old.update_version IS NULL) <> (new.update_version IS NULL))',
      ),
      onPostgres(
        'site_summaries_inventory_delete',
        'inventory_items',
        'DELETE',
        'site_summaries_updates',
        '(old.update_version IS NOT NULL)',
      ),
    ],
  },
});
