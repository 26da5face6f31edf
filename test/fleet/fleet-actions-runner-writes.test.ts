import { afterEach, describe, expect, it, vi } from 'vitest';
import { createFleetActions } from '../../src/fleet-actions/index.js';
import { CANCELLED_MESSAGE } from '../../src/jobs/job-kind.js';
import { type JobsRepository } from '../../src/jobs/jobs.repository.js';
import { jobRunnerOnMemory } from '../support/job-runner-fixture.js';

/**
 * The `fleet-action` kind's job rows are the job runner's writes (issue 34: `jobRow: 'runner'`): queued
 * at submit, running before the run, each site's result as reported progress, the outcome, recovery and
 * cancel (the sites a cancel while queued never reached are the progress the kind answers, written by
 * the runner). The repository fleet actions are given is watched: the kind itself writes no job row.
 */
afterEach(() => {
  vi.restoreAllMocks();
});

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
};

interface Pending {
  siteId: string;
  slug: string;
  resolve: () => void;
}

function setup() {
  const { repository, logs, clock, runner } = jobRunnerOnMemory();
  // Every write fleet actions make through the repository they are given (the runner has its own).
  const writes: { method: string; id: unknown; columns: string[] }[] = [];
  const watched = new Proxy(repository, {
    get(target, name: keyof JobsRepository) {
      const member = target[name];
      if (typeof member !== 'function' || name === 'find' || name === 'list') return member;
      return (...args: unknown[]) => {
        const [id, changes] = args as [unknown, Record<string, unknown> | undefined];
        writes.push({ method: String(name), id, columns: Object.keys(changes ?? {}) });
        return (member as (...values: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  // Each site's plugin install waits until the test lets it finish.
  const pending: Pending[] = [];
  const plugins = {
    install: (siteId: string, slug: string) =>
      new Promise<{ version: string; status: string }>((resolve) =>
        pending.push({ siteId, slug, resolve: () => resolve({ version: '1.2.3', status: 'active' }) }),
      ),
    activate: () => Promise.resolve({ version: '1.2.3', status: 'active' }),
    deactivate: () => Promise.resolve({ version: '1.2.3', status: 'inactive' }),
    remove: () => Promise.resolve(),
  };
  const themes = {
    install: () => Promise.reject(new Error('not in these tests')),
    activate: () => Promise.reject(new Error('not in these tests')),
    remove: () => Promise.reject(new Error('not in these tests')),
  };
  const siteIds = ['site_a', 'site_b', 'site_c'];
  const fleetActions = createFleetActions({
    jobs: runner,
    jobRows: { find: async (id) => watched.find(id), list: async (filter) => watched.list(filter) },
    sites: {
      findById: async (id: string) =>
        (siteIds.includes(id) ? { id, url: `http://${id}.test`, state: 'connected' } : undefined) as never,
      statesOf: async (ids: readonly string[]) =>
        new Map(
          ids
            .filter((id) => siteIds.includes(id))
            .map((id) => [id, { url: `http://${id}.test`, state: 'connected' as const }]),
        ),
      connectedIds: async () => siteIds,
    },
    fleet: { sitesWith: () => Promise.resolve([]) },
    plugins,
    themes,
    clock,
    logger: logs.logger,
    concurrency: 1,
  });
  const install = (sites: string[]) =>
    fleetActions.start(
      { action: 'install', type: 'plugin', slug: 'akismet', sites, tag: [] },
      { kind: 'token', id: 'tok_1' },
    );
  const row = (id: string) => repository.find(id)!;
  const sitesOf = (id: string) =>
    (JSON.parse(row(id).progress) as { sites: { siteId: string; state: string; reason: string | null }[] }).sites;
  return { repository, runner, logs, clock, writes, pending, fleetActions, install, row, sitesOf };
}

describe('a fleet action’s job row, written by the job runner', () => {
  it('is written queued, running, with each site’s result as progress, and ended as the kind returns', async () => {
    const s = setup();
    // A clock that moves on by itself: the kind reports its progress at most once a second.
    const realNow = Date.now.bind(Date);
    let later = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + later);
    const started = await s.install(['site_a', 'site_b']);
    expect(started).toMatchObject({ state: 'queued', counts: { total: 2, done: 0 } });
    await until(() => s.pending.length === 1);
    expect(s.row(started.id)).toMatchObject({ kind: 'fleet-action', siteId: null, state: 'running', attempts: 1 });
    expect(JSON.parse(s.row(started.id).params)).toMatchObject({ action: 'install', slug: 'akismet' });
    later = 5_000;
    s.pending[0]!.resolve();
    await until(() => s.pending.length === 2);
    // The first site's result, reported through the runner's context while the action still runs.
    expect(s.row(started.id).state).toBe('running');
    expect(s.sitesOf(started.id).map((site) => site.state)).toEqual(['succeeded', 'queued']);
    s.pending[1]!.resolve();
    await s.fleetActions.idle();
    expect(s.row(started.id)).toMatchObject({ state: 'succeeded', reason: null, message: null, attempts: 1 });
    expect(s.row(started.id).finishedAt).toEqual(s.clock.now());
    expect(await s.fleetActions.get(started.id)).toMatchObject({
      state: 'succeeded',
      counts: { total: 2, done: 2, succeeded: 2 },
      sites: [
        { siteId: 'site_a', state: 'succeeded', version: '1.2.3', status: 'active' },
        { siteId: 'site_b', state: 'succeeded', version: '1.2.3', status: 'active' },
      ],
    });
    expect(s.writes).toEqual([]);
  });

  it('ends cancelled when cancelled while it runs: the sites not reached skipped, as the runner writes it', async () => {
    const s = setup();
    const started = await s.install(['site_a', 'site_b', 'site_c']);
    await until(() => s.pending.length === 1);
    expect((await s.runner.cancel(started.id, { kind: 'token', id: 'tok_2' })).state).toBe('running');
    s.pending[0]!.resolve();
    await s.fleetActions.idle();
    expect(s.row(started.id)).toMatchObject({ state: 'cancelled', reason: 'cancelled', message: null });
    expect(s.sitesOf(started.id).map((site) => [site.state, site.reason])).toEqual([
      ['succeeded', null],
      ['skipped', 'cancelled'],
      ['skipped', 'cancelled'],
    ]);
    expect(s.logs.events('job.cancelled')).toEqual([
      expect.objectContaining({ jobId: started.id, state: 'running', requestedById: 'tok_2' }),
    ]);
    expect(s.writes).toEqual([]);
  });

  it('is cancelled while queued by the runner, with the sites the kind answers as never reached', async () => {
    const s = setup();
    // Two actions run at once: a third waits, queued.
    const first = await s.install(['site_a']);
    const second = await s.install(['site_b']);
    await until(() => s.pending.length === 2);
    const third = await s.install(['site_a', 'site_c']);
    expect(s.row(third.id).state).toBe('queued');
    expect(await s.runner.cancel(third.id)).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
    expect(s.row(third.id)).toMatchObject({
      state: 'cancelled',
      reason: 'cancelled',
      message: CANCELLED_MESSAGE,
      attempts: 0,
      startedAt: null,
      finishedAt: s.clock.now(),
    });
    expect(s.sitesOf(third.id).map((site) => [site.state, site.reason])).toEqual([
      ['skipped', 'cancelled'],
      ['skipped', 'cancelled'],
    ]);
    expect(s.writes).toEqual([]);
    for (const pending of s.pending) pending.resolve();
    await s.fleetActions.idle();
    expect([s.row(first.id).state, s.row(second.id).state, s.row(third.id).state]).toEqual([
      'succeeded',
      'succeeded',
      'cancelled',
    ]);
    expect(s.writes).toEqual([]);
  });

  it('recovers an action left running as interrupted, runs one left queued, and fails one it cannot read', async () => {
    const s = setup();
    const site = (siteId: string, state: string) => ({
      siteId,
      url: `http://${siteId}.test`,
      state,
      reason: null,
      message: null,
      version: null,
      status: null,
      finishedAt: null,
    });
    const params = JSON.stringify({
      action: 'install',
      type: 'plugin',
      slug: 'akismet',
      activate: false,
      deactivate: false,
      requestedBy: null,
    });
    const add = (id: string, state: 'running' | 'queued', progress: string, asked = params) =>
      s.repository.insert({
        id,
        kind: 'fleet-action',
        siteId: null,
        state,
        params: asked,
        progress,
        attempts: state === 'running' ? 1 : 0,
        createdAt: s.clock.now(),
        startedAt: state === 'running' ? s.clock.now() : null,
      });
    add('fact_killed', 'running', JSON.stringify({ sites: [site('site_a', 'running'), site('site_b', 'queued')] }));
    add('fact_lost', 'running', 'not json');
    add('fact_waiting', 'queued', JSON.stringify({ sites: [site('site_c', 'queued')] }));
    add('fact_unreadable', 'queued', JSON.stringify({ sites: [] }), '{"action":"explode"}');
    expect(await s.fleetActions.recover()).toEqual({ requeued: 2, interrupted: 2 });
    expect(s.row('fact_killed')).toMatchObject({
      state: 'failed',
      reason: 'interrupted',
      message: 'the daemon stopped before this site’s turn',
      finishedAt: s.clock.now(),
    });
    expect(s.sitesOf('fact_killed').map((entry) => [entry.state, entry.reason])).toEqual([
      ['failed', 'interrupted'],
      ['skipped', 'interrupted'],
    ]);
    // Its sites cannot be listed: the job alone says how it ended, its progress as it was.
    expect(s.row('fact_lost')).toMatchObject({ state: 'failed', reason: 'interrupted', progress: 'not json' });
    await until(() => s.pending.length === 1);
    expect(s.row('fact_waiting')).toMatchObject({ state: 'running', attempts: 1 });
    s.pending[0]!.resolve();
    await s.fleetActions.idle();
    expect(s.row('fact_waiting')).toMatchObject({ state: 'succeeded', attempts: 1 });
    expect(s.row('fact_unreadable')).toMatchObject({
      state: 'failed',
      reason: 'stored-data-unreadable',
      attempts: 1,
    });
    expect(s.logs.events('job.interrupted').map((event) => [event.jobId, event.action])).toEqual([
      ['fact_killed', 'failed'],
      ['fact_lost', 'failed'],
      ['fact_unreadable', 'requeued'],
      ['fact_waiting', 'requeued'],
    ]);
    expect(s.writes).toEqual([]);
  });
});
