import { onTestFinished } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { createJobRunner } from '../../src/jobs/job-runner.js';
import { createJobsRepository } from '../../src/jobs/jobs.repository.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { createLoggedEvents } from '../../src/shared/logger.js';
import { createCapturedLogger } from './log-capture.js';
import type { TestApp } from './test-app.js';

/**
 * The job runner on a private in-memory database, with a fake clock and a captured log, for tests
 * of the runner and of the kinds registered with it. Called inside a test; the database closes when
 * the test ends.
 */
export function jobRunnerOnMemory() {
  const database = openDatabase(':memory:');
  onTestFinished(() => database.close());
  const repository = createJobsRepository({ db: database.db });
  const logs = createCapturedLogger();
  const clock = createFakeClock(new Date('2026-11-23T10:00:00Z'));
  const runner = createJobRunner({ repository, clock, logger: logs.logger, events: createLoggedEvents(logs.logger) });
  return { database, repository, logs, clock, runner };
}

/**
 * A job runner of a test's own over a test app's SQLite database, for a feature service built beside the
 * app's (its kinds registered on this one, the app's runner keeping its own).
 */
export function jobRunnerOf(t: Pick<TestApp, 'database' | 'logs' | 'services' | 'clock'>) {
  return createJobRunner({
    repository: createJobsRepository({ db: t.database.db }),
    clock: t.clock,
    logger: t.logs.logger,
    events: t.services.events,
  });
}
