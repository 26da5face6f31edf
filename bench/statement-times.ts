/**
 * The SQL statements a bench phase runs, timed: better-sqlite3's run/get/all wrapped while it
 * lasts (every database of the process), then a table per statement of how many a site update
 * runs and the microseconds each takes on average (the statement's own time in SQLite and
 * better-sqlite3, waits on the disk included; drizzle's work before and after it is not in it), and
 * how the commits' times spread.
 */
import Database from 'better-sqlite3';

type Method = 'run' | 'get' | 'all';
type StatementMethods = Record<Method, (...parameters: unknown[]) => unknown> & { source: string };

export function timeStatements() {
  const probe = new Database(':memory:');
  const prototype = Object.getPrototypeOf(probe.prepare('select 1')) as StatementMethods;
  probe.close();
  const originals = new Map<Method, StatementMethods[Method]>();
  const seen = new Map<string, { count: number; micros: number }>();
  const commits: number[] = [];
  // Statements prepared (drizzle prepares each query it runs, unless the query was prepared once and kept).
  const databasePrototype = Database.prototype as unknown as { prepare: (source: string) => unknown };
  const originalPrepare = databasePrototype.prepare;
  const prepared = new Map<string, { count: number; micros: number }>();
  databasePrototype.prepare = function (this: unknown, source: string) {
    const started = process.hrtime.bigint();
    try {
      return originalPrepare.call(this, source);
    } finally {
      const key = source.replace(/\s+/g, ' ').slice(0, 100);
      const entry = prepared.get(key) ?? { count: 0, micros: 0 };
      entry.count++;
      entry.micros += Number(process.hrtime.bigint() - started) / 1000;
      prepared.set(key, entry);
    }
  };
  for (const method of ['run', 'get', 'all'] as const) {
    const original = prototype[method];
    originals.set(method, original);
    prototype[method] = function (this: StatementMethods, ...parameters: unknown[]) {
      const started = process.hrtime.bigint();
      try {
        return original.apply(this, parameters);
      } finally {
        const key = `${method} ${this.source.replace(/\s+/g, ' ').slice(0, 100)}`;
        const entry = seen.get(key) ?? { count: 0, micros: 0 };
        entry.count++;
        const micros = Number(process.hrtime.bigint() - started) / 1000;
        entry.micros += micros;
        seen.set(key, entry);
        if (this.source === 'COMMIT') commits.push(micros);
      }
    };
  }
  return {
    /** Puts the methods back and prints the table, per site update of `sites`. */
    report(sites: number): void {
      for (const [method, original] of originals) prototype[method] = original;
      databasePrototype.prepare = originalPrepare;
      const rows = [...seen].sort((a, b) => b[1].micros - a[1].micros);
      let count = 0;
      let micros = 0;
      for (const [statement, entry] of rows) {
        count += entry.count;
        micros += entry.micros;
        console.log(
          `${(entry.count / sites).toFixed(2).padStart(6)} a site, ${(entry.micros / entry.count).toFixed(1).padStart(7)} µs each: ${statement}`,
        );
      }
      console.log(
        `statements: ${(count / sites).toFixed(1)} a site update, ${(micros / sites).toFixed(0)} µs a site update in all`,
      );
      let preparedCount = 0;
      let preparedMicros = 0;
      for (const [statement, entry] of [...prepared].sort((a, b) => b[1].micros - a[1].micros)) {
        preparedCount += entry.count;
        preparedMicros += entry.micros;
        if (entry.micros / sites >= 2)
          console.log(
            `${(entry.count / sites).toFixed(2).padStart(6)} a site, ${(entry.micros / entry.count).toFixed(1).padStart(7)} µs each: prepare ${statement}`,
          );
      }
      console.log(
        `prepared: ${(preparedCount / sites).toFixed(1)} a site update, ${(preparedMicros / sites).toFixed(0)} µs a site update in all`,
      );
      // A commit that crosses SQLite's automatic checkpoint also copies the log into the database and waits on the disk.
      if (commits.length > 0) {
        const sorted = [...commits].sort((a, b) => a - b);
        const at = (share: number) =>
          sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!.toFixed(0);
        const all = sorted.reduce((sum, value) => sum + value, 0);
        const slowest = sorted.slice(Math.floor(sorted.length * 0.95)).reduce((sum, value) => sum + value, 0);
        console.log(
          `commits: p50 ${at(0.5)} µs, p90 ${at(0.9)}, p99 ${at(0.99)}, the slowest 5 % ${((100 * slowest) / all).toFixed(0)} % of their time`,
        );
      }
    },
  };
}
