/**
 * CPU time of this process's descendants by role, from /proc (Linux), for the cluster's jobs bench
 * (bench/jobs.ts): where a job's CPU goes when the daemon's processes, the sites' PHP, MariaDB and an audit's
 * Chromium share the machine. Every process below this one is sampled every 200 ms and given a label by
 * `labelOf` from its own name and the bench's child it descends from (a daemon, php, mariadbd); it keeps that
 * label once orphaned (a Chromium reaped by init after its audit worker exited).
 *
 * A process's own ticks only (utime + stime), never its reaped children's (those are read from the children
 * themselves, and would count twice): a process's last 200 ms before it exits is missed, and so is a process
 * that lives less than that (none of the roles measured starts such processes by the dozen).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const SAMPLE_MS = 200;

/** A process as /proc/<pid>/stat shows it. */
interface Stat {
  pid: number;
  ppid: number;
  comm: string;
  /** utime + stime, in clock ticks. */
  ticks: number;
  /** Since boot, in clock ticks: with the pid, a process's identity (pids are reused). */
  startedAt: number;
}

/** Which label a descendant's CPU counts for: `top` is the bench's own child it descends from; undefined: none. */
export type LabelOf = (top: { pid: number; comm: string }, own: { pid: number; comm: string }) => string | undefined;

export interface ProcessCpu {
  /** CPU ms by label so far (since the sampler started), read now. */
  read(): Map<string, number>;
  stop(): void;
}

export function sampleProcessCpu(labelOf: LabelOf): ProcessCpu {
  const msPerTick = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
  const tracked = new Map<string, { label: string; base: number; last: number }>();

  // Processes the first sample finds count from their ticks then; later ones from zero.
  let first = true;

  function sample(): void {
    const stats = new Map<number, Stat>();
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const stat = readStat(Number(name));
      if (stat) stats.set(stat.pid, stat);
    }
    for (const stat of stats.values()) {
      const key = `${stat.pid}:${stat.startedAt}`;
      const known = tracked.get(key);
      if (known) {
        known.last = stat.ticks;
        continue;
      }
      const top = topOf(stat, stats);
      const label = top && labelOf({ pid: top.pid, comm: top.comm }, { pid: stat.pid, comm: stat.comm });
      if (label) tracked.set(key, { label, base: first ? stat.ticks : 0, last: stat.ticks });
    }
    first = false;
  }

  sample();
  const timer = setInterval(sample, SAMPLE_MS);
  return {
    read() {
      sample();
      const byLabel = new Map<string, number>();
      for (const { label, base, last } of tracked.values())
        byLabel.set(label, (byLabel.get(label) ?? 0) + (last - base) * msPerTick);
      return byLabel;
    },
    stop: () => clearInterval(timer),
  };
}

/** The bench's own child that `stat` descends from (itself, if it is one), or undefined. */
function topOf(stat: Stat, stats: Map<number, Stat>): Stat | undefined {
  let at: Stat | undefined = stat;
  while (at && at.ppid !== process.pid) at = at.ppid > 1 ? stats.get(at.ppid) : undefined;
  return at;
}

function readStat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // Gone since the listing.
  }
  const close = text.lastIndexOf(')');
  // The fields after the name's closing parenthesis, from the third (state): ppid is the 4th, utime the 14th.
  const field = text.slice(close + 2).split(' ');
  const at = (n: number) => Number(field[n - 3]);
  return {
    pid,
    ppid: at(4),
    comm: text.slice(text.indexOf('(') + 1, close),
    ticks: at(14) + at(15),
    startedAt: at(22),
  };
}
