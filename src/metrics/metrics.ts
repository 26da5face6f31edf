import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export type JobKind = 'backup' | 'restore' | 'audit' | 'sync';
export type JobOutcome = 'completed' | 'failed';
export type QueueName = 'site_tasks' | 'uptime_probes' | 'audits' | 'backups';

/** What the metrics read at scrape time: cheap, no site ids. */
export interface MetricsSources {
  /** Sites per state, one grouped query. */
  sitesByState(): Promise<Record<string, number>>;
  /** Tasks waiting or running, per queue. */
  queueDepths(): Record<QueueName, number>;
  /** Tasks the site task queue has finished so far (its tasks are not all jobs counted here). */
  siteTasksCompleted(): number;
}

const PROBE_SECONDS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const JOB_SECONDS = [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200];
const HTTP_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * One Prometheus registry for the daemon. Services report what happened through the small
 * `observe*` methods (all optional for them); gauges read the database and the queues when scraped.
 * Labels stay bounded: outcomes, kinds, queue names and route patterns, never site ids or raw paths.
 */
export function createMetrics({ processMetrics = true }: { processMetrics?: boolean } = {}) {
  const registry = new Registry();
  if (processMetrics) collectDefaultMetrics({ register: registry });
  let sources: MetricsSources | undefined;
  /** Tasks finished per queue (readiness watches them move). */
  const completions: Record<QueueName, number> = { site_tasks: 0, uptime_probes: 0, audits: 0, backups: 0 };

  new Gauge({
    name: 'sitewarden_sites',
    help: 'Sites by connection state.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      if (!sources) return;
      for (const [state, n] of Object.entries(await sources.sitesByState())) this.set({ state }, n);
    },
  });
  new Gauge({
    name: 'sitewarden_queue_depth',
    help: 'Tasks waiting or running, per queue.',
    labelNames: ['queue'],
    registers: [registry],
    collect() {
      this.reset();
      if (!sources) return;
      for (const [queue, n] of Object.entries(sources.queueDepths())) this.set({ queue }, n);
    },
  });
  const probes = new Counter({
    name: 'sitewarden_uptime_probes_total',
    help: 'Uptime probes by outcome.',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const probeSeconds = new Histogram({
    name: 'sitewarden_uptime_probe_duration_seconds',
    help: 'Uptime probe response time.',
    labelNames: ['outcome'],
    buckets: PROBE_SECONDS,
    registers: [registry],
  });
  const jobs = new Counter({
    name: 'sitewarden_jobs_total',
    help: 'Finished backups, restores, audits and syncs by outcome.',
    labelNames: ['kind', 'outcome'],
    registers: [registry],
  });
  const jobSeconds = new Histogram({
    name: 'sitewarden_job_duration_seconds',
    help: 'How long backups, restores, audits and syncs took.',
    labelNames: ['kind'],
    buckets: JOB_SECONDS,
    registers: [registry],
  });
  const httpSeconds = new Histogram({
    name: 'sitewarden_http_request_duration_seconds',
    help: 'API request latency by method, route pattern and status class.',
    labelNames: ['method', 'route', 'status'],
    buckets: HTTP_SECONDS,
    registers: [registry],
  });
  const authRejected = new Counter({
    name: 'sitewarden_auth_rate_limited_total',
    help: 'Requests refused because their address sent too many bad tokens.',
    registers: [registry],
  });
  const overloaded = new Counter({
    name: 'sitewarden_http_overloaded_total',
    help: 'Dashboard and API requests refused with 503 because the event loop lagged past SITEWARDEN_OVERLOAD_LAG_MS.',
    registers: [registry],
  });

  const queueOf: Record<Exclude<JobKind, 'sync'>, QueueName> = {
    backup: 'backups',
    restore: 'backups',
    audit: 'audits',
  };

  return {
    registry,
    contentType: registry.contentType,
    /** The daemon's database and queues, read at each scrape. */
    setSources(next: MetricsSources): void {
      sources = next;
    },
    observeProbe(outcome: 'up' | 'down', responseMs: number | null): void {
      probes.inc({ outcome });
      if (responseMs !== null) probeSeconds.observe({ outcome }, responseMs / 1000);
      completions.uptime_probes++;
    },
    observeJob(kind: JobKind, outcome: JobOutcome, durationMs: number): void {
      jobs.inc({ kind, outcome });
      jobSeconds.observe({ kind }, Math.max(0, durationMs) / 1000);
      if (kind !== 'sync') completions[queueOf[kind]]++;
    },
    /** Per queue: tasks waiting or running, and tasks finished so far. */
    queues(): Record<QueueName, { depth: number; completed: number }> {
      const depths = sources?.queueDepths() ?? { site_tasks: 0, uptime_probes: 0, audits: 0, backups: 0 };
      const siteTasks = sources?.siteTasksCompleted() ?? 0;
      return {
        site_tasks: { depth: depths.site_tasks, completed: siteTasks },
        uptime_probes: { depth: depths.uptime_probes, completed: completions.uptime_probes },
        audits: { depth: depths.audits, completed: completions.audits },
        backups: { depth: depths.backups, completed: completions.backups },
      };
    },
    observeRequest(method: string, route: string, status: number, seconds: number): void {
      httpSeconds.observe({ method, route, status: `${Math.floor(status / 100)}xx` }, seconds);
    },
    noteRateLimited(): void {
      authRejected.inc();
    },
    /** A request refused because the daemon was overloaded (http/overload.ts). */
    noteOverloaded(): void {
      overloaded.inc();
    },
    render: () => registry.metrics(),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
/** What a service that finishes jobs needs of the metrics (optional for it: tests leave it out). */
export type JobMetrics = Pick<Metrics, 'observeJob'>;
