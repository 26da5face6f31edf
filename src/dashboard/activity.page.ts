import { Hono } from 'hono';
import { html } from 'hono/html';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { jobs as jobsTable } from '../jobs/jobs.table.js';
import type { PublishedEvent } from '../shared/event-bus.js';
import { visibleSites } from '../sites/index.js';
import { parseStored } from '../shared/stored-json.js';
import type { DashboardServices } from './deps.js';
import { age, badge } from './format.js';
import { page } from './layout.js';
import type { DashboardEnv } from './session.js';

/** How often the stream looks for job progress (a cheap indexed query), and sends a keep-alive. */
const JOB_POLL_MS = 1_000;
const KEEP_ALIVE_MS = 15_000;
const MAX_QUEUED_MESSAGES = 500;

/** Site names by id, looked up once each (a removed site keeps its id). */
function siteNames(sites: DashboardServices['sites']) {
  const known = new Map<string, string>();
  return async (id: string): Promise<string> => {
    let name = known.get(id);
    if (name === undefined) {
      const site = await sites.find(id);
      name = site ? (site.name ?? site.url) : id;
      if (known.size > 1_000) known.clear();
      known.set(id, name);
    }
    return name;
  };
}

/** One line a person can read, from a catalogued event's name and fields: the site by its name. */
async function summarise(event: PublishedEvent, siteName: (id: string) => Promise<string>): Promise<string> {
  const f = event.fields;
  const where =
    typeof f.siteId === 'string' ? ` on ${await siteName(f.siteId)}` : typeof f.url === 'string' ? ` on ${f.url}` : '';
  return `${event.event}${where}${typeof f.reason === 'string' ? `: ${f.reason}` : ''}`;
}

/** Any job's progress is a JSON object (jobs.table.ts); only its plain fields are shown. */
const JobProgress = z.record(z.string(), z.unknown());
const progressText = (progress: string) => {
  try {
    const p = parseStored(JobProgress, progress, 'a job’s progress');
    return Object.entries(p)
      .filter(([, v]) => typeof v === 'number' || typeof v === 'string')
      .slice(0, 4)
      .map(([k, v]) => `${k} ${String(v)}`)
      .join(', ');
  } catch {
    return '';
  }
};

export function createActivityPage(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();

  /**
   * Server-Sent Events behind the session: every catalogued event (optionally only one site's),
   * and a `jobs` message whenever a queued or running job changes (progress, state).
   */
  app.get('/events', (c) => {
    const site = c.req.query('site');
    const siteName = siteNames(deps.sites);
    // Site scopes (issue 33): a user limited to tags gets only the events and jobs of their sites.
    const scope = c.get('access').sites;
    const visible = async (siteId: unknown): Promise<boolean> => {
      if (scope.kind === 'all') return true;
      if (typeof siteId !== 'string') return false;
      try {
        await deps.sites.checkVisible(siteId, scope);
        return true;
      } catch {
        return false;
      }
    };
    return streamSSE(c, async (stream) => {
      // Messages in the order made; an event's is made as it comes (its site looked up), and written in its turn.
      const queue: Promise<{ event: string; data: string } | undefined>[] = [];
      let wake: (() => void) | null = null;
      const push = (
        message: { event: string; data: string } | Promise<{ event: string; data: string } | undefined>,
      ) => {
        if (queue.length < MAX_QUEUED_MESSAGES) queue.push(Promise.resolve(message));
        wake?.();
      };
      const eventMessage = async (event: PublishedEvent) => {
        if (!(await visible(event.fields.siteId))) return undefined;
        const data = {
          event: event.event,
          level: event.level,
          fields: event.fields,
          summary: await summarise(event, siteName),
        };
        return { event: 'event', data: JSON.stringify(data) };
      };
      // Every process's events (cluster mode: a worker's backup, audit or probe too), not only this one's.
      const unsubscribe = deps.events.subscribe(
        (event) => {
          if (site && event.fields.siteId !== site) return;
          // A lookup that fails leaves the event out of this page's stream.
          push(eventMessage(event).catch(() => undefined));
        },
        { everywhere: true },
      );
      let lastJobs = '';
      const pollJobs = async () => {
        const listed = [
          ...(await deps.jobs.list({ state: 'running', siteId: site, limit: 50 })),
          ...(await deps.jobs.list({ state: 'queued', siteId: site, limit: 50 })),
        ];
        const shown = await Promise.all(listed.map((job) => visible(job.siteId)));
        const active = listed
          .filter((_, index) => shown[index])
          .map((job) => ({ id: job.id, kind: job.kind, siteId: job.siteId, state: job.state, progress: job.progress }));
        const text = JSON.stringify(active);
        if (text !== lastJobs) {
          if (lastJobs !== '' || active.length > 0) push({ event: 'jobs', data: text });
          lastJobs = text;
        }
      };
      // A poll that fails (the database busy) is the next one's to make up.
      const poller = setInterval(() => void pollJobs().catch(() => undefined), JOB_POLL_MS);
      const keepAlive = setInterval(() => push({ event: 'ping', data: '{}' }), KEEP_ALIVE_MS);
      let closed = false;
      stream.onAbort(() => {
        closed = true;
        wake?.();
      });
      try {
        await pollJobs();
        while (!closed) {
          const next = queue.shift();
          if (next) {
            const message = await next;
            if (message) await stream.writeSSE(message);
            continue;
          }
          await new Promise<void>((resolve) => (wake = resolve));
          wake = null;
        }
      } finally {
        unsubscribe();
        clearInterval(poller);
        clearInterval(keepAlive);
      }
    });
  });

  app.get('/activity', async (c) => {
    const session = c.get('session');
    const now = deps.clock.now().getTime();
    // Site scopes (issue 33): the jobs of the sites the user may see (none without a site: a fleet job spans sites).
    const scope = c.get('access').sites;
    const jobs = await deps.jobs.list({
      limit: 50,
      visible: scope.kind === 'all' ? undefined : visibleSites(scope, jobsTable.siteId),
    });
    const siteName = siteNames(deps.sites);
    const names = new Map(
      await Promise.all(
        [...new Set(jobs.flatMap((job) => (job.siteId ? [job.siteId] : [])))].map(
          async (id) => [id, await siteName(id)] as const,
        ),
      ),
    );
    const body = html`<h1>Activity</h1>
      <section class="card" aria-labelledby="live-h">
        <h2 id="live-h">Live events</h2>
        <p class="muted" id="live-note">Events appear here as they happen (this page keeps a connection open).</p>
        <ol id="live-events" class="events" aria-live="polite"></ol>
      </section>
      <section class="card" id="jobs" data-live-section aria-labelledby="jobs-h">
        <h2 id="jobs-h">Jobs</h2>
        ${
          jobs.length === 0
            ? html`<p class="muted">No jobs yet: backups, restores and audits show here.</p>`
            : html`<div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Job</th>
                      <th scope="col">Site</th>
                      <th scope="col">State</th>
                      <th scope="col">Progress</th>
                      <th scope="col">Created</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${jobs.map(
                      (job) =>
                        html`<tr>
                          <th scope="row">${job.kind}<span class="url">${job.id}</span></th>
                          <td>
                            ${job.siteId ? html`<a href="/sites/${job.siteId}">${names.get(job.siteId)}</a>` : '—'}
                          </td>
                          <td>
                            ${badge(job.state)}${job.message ? html`<span class="url">${job.message}</span>` : ''}
                          </td>
                          <td class="progress">${progressText(job.progress)}</td>
                          <td>${age(job.createdAt, now)}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </div>`
        }
      </section>`;
    return c.html(page({ title: 'Activity', session, current: '/activity', body, scripts: ['/assets/live.js'] }));
  });
  return app;
}
