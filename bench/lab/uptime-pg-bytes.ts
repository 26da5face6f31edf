/**
 * What a cluster's probe costs PostgreSQL on disk (issue 34, docs/scaling.md): BENCH_SITES (default 10000)
 * sites' probes written as an uptime worker writes them, a second's worth a statement (the repository's
 * `insertProbes`), for BENCH_MINUTES (default 10) simulated minutes at 60 s; then the WAL written and the
 * table's size with its indexes, each a probe. The server is the tests' throwaway one (fsync off: the bytes
 * are the same, the time is not).
 *
 *   node --import tsx bench/lab/uptime-pg-bytes.ts
 */
import pg from 'pg';
import { openStateDatabase } from '../../src/db/state-db.js';
import { createUptimeRepository, type ProbeRow } from '../../src/uptime/uptime.repository.js';
import { createTestDatabase, startPrivatePostgres } from '../../test/support/postgres.js';

const SITES = Number(process.env.BENCH_SITES ?? 10_000);
const MINUTES = Number(process.env.BENCH_MINUTES ?? 10);

const server = await startPrivatePostgres();
try {
  const db = await createTestDatabase(server.url, 'uptime-bytes');
  const state = await openStateDatabase({ url: db.url, sqlitePath: '' });
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const scalar = async (query: string) => Number(((await client.query(query)).rows[0] as { v: unknown }).v);
  try {
    const repository = createUptimeRepository(state);
    const ids = Array.from({ length: SITES }, (_, i) => `site_${String(i).padStart(6, '0')}`);
    const perSecond = Math.ceil(SITES / 60);
    const walBefore = await scalar(`select pg_current_wal_lsn() - '0/0'::pg_lsn as v`);
    const start = Date.UTC(2026, 10, 30);
    let written = 0;
    for (let second = 0; second < MINUTES * 60; second++) {
      const rows: ProbeRow[] = [];
      for (let i = 0; i < perSecond; i++) {
        const siteId = ids[(second * perSecond + i) % SITES]!;
        rows.push({
          siteId,
          at: start + second * 1_000 + i,
          up: true,
          httpStatus: 200,
          responseMs: 40 + (i % 50),
          cause: null,
          certificateExpiresAt: null,
        });
      }
      await repository.insertProbes(rows);
      written += rows.length;
    }
    await client.query('checkpoint');
    const wal = (await scalar(`select pg_current_wal_lsn() - '0/0'::pg_lsn as v`)) - walBefore;
    const table = await scalar(`select pg_total_relation_size('uptime_probes') as v`);
    const heap = await scalar(`select pg_relation_size('uptime_probes') as v`);
    console.log(
      `${written} probes (${SITES} sites, ${MINUTES} min at 60 s, ${perSecond} a statement): ` +
        `WAL ${(wal / written).toFixed(0)} bytes a probe; table with indexes ${(table / written).toFixed(0)} bytes ` +
        `a probe (heap ${(heap / written).toFixed(0)})`,
    );
  } finally {
    await client.end();
    await state.close();
    await db.drop();
  }
} finally {
  await server.stop();
}
