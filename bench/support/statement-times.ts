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
type Tally = Map<string, { count: number; micros: number }>;

/** Counts one call of `statement` (its SQL on one line, cut at 100 characters) that took `micros`. */
function tally(calls: Tally, label: string, statement: string, micros: number): void {
  const key = `${label} ${statement.replace(/\s+/g, ' ').slice(0, 100)}`;
  const entry = calls.get(key) ?? { count: 0, micros: 0 };
  entry.count++;
  entry.micros += micros;
  calls.set(key, entry);
}

/** Prints the calls per site update, dearest first (those of at least `leastMicros` a site update), and their total. */
function printCalls(calls: Tally, what: string, sites: number, leastMicros = 0): void {
  let count = 0;
  let micros = 0;
  for (const [statement, entry] of [...calls].sort((a, b) => b[1].micros - a[1].micros)) {
    count += entry.count;
    micros += entry.micros;
    if (entry.micros / sites >= leastMicros)
      console.log(
        `${(entry.count / sites).toFixed(2).padStart(6)} a site, ${(entry.micros / entry.count).toFixed(1).padStart(7)} µs each: ${statement}`,
      );
  }
  console.log(
    `${what}: ${(count / sites).toFixed(1)} a site update, ${(micros / sites).toFixed(0)} µs a site update in all`,
  );
}

const microsSince = (started: bigint) => Number(process.hrtime.bigint() - started) / 1000;

export function timeStatements() {
  const probe = new Database(':memory:');
  const prototype = Object.getPrototypeOf(probe.prepare('select 1')) as StatementMethods;
  probe.close();
  const originals = new Map<Method, StatementMethods[Method]>();
  const seen: Tally = new Map();
  const commits: number[] = [];
  // Statements prepared (drizzle prepares each query it runs, unless the query was prepared once and kept).
  const databasePrototype = Database.prototype as unknown as { prepare: (source: string) => unknown };
  const originalPrepare = databasePrototype.prepare;
  const prepared: Tally = new Map();
  databasePrototype.prepare = function (this: unknown, source: string) {
    const started = process.hrtime.bigint();
    try {
      return originalPrepare.call(this, source);
    } finally {
      tally(prepared, 'prepare', source, microsSince(started));
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
        const micros = microsSince(started);
        tally(seen, method, this.source, micros);
        if (this.source === 'COMMIT') commits.push(micros);
      }
    };
  }
  return {
    /** Puts the methods back and prints the table, per site update of `sites`. */
    report(sites: number): void {
      for (const [method, original] of originals) prototype[method] = original;
      databasePrototype.prepare = originalPrepare;
      printCalls(seen, 'statements', sites);
      // Only those that cost something: a statement prepared once and kept is no cost of a site update.
      printCalls(prepared, 'prepared', sites, 2);
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
