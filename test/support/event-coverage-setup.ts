import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { eventCatalogue } from '../../src/shared/events.js';
import { NOT_PRODUCIBLE_IN_TESTS } from './event-coverage.js';

const ROOT = resolve(import.meta.dirname, '../..');

function linesOf(dir: string, prefix: string): Set<string> {
  return new Set(
    readdirSync(dir)
      .filter((name) => name.startsWith(prefix))
      .flatMap((name) => readFileSync(join(dir, name), 'utf8').split('\n'))
      .filter(Boolean),
  );
}

/**
 * At the end of a whole `vitest run` (every test file its configuration selects ran, no name filter), fails the run when
 * a catalogued event was never logged by any test, so every event has a scenario that
 * produces it. A run of some files only checks nothing.
 */
export default function setup(project: TestProject): () => Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sitewarden-events-'));
  project.provide('emittedEventsDir', dir);
  return async () => {
    try {
      const ran = linesOf(dir, 'files-');
      // What this run's configuration selects, --exclude included: the test line runs the memory tests in a
      // run of their own and the rest with --exclude, and that rest is whole (a scan of test/ would
      // count the memory tests as missing, and never check).
      const all = (await project.globTestFiles()).testFiles.map((file) => relative(ROOT, file));
      const filtered = Boolean((project.config as { testNamePattern?: unknown }).testNamePattern);
      if (filtered || all.some((file) => !ran.has(file))) return;
      const emitted = linesOf(dir, 'events-');
      const never = Object.keys(eventCatalogue).filter(
        (name) => !emitted.has(name) && !(name in NOT_PRODUCIBLE_IN_TESTS),
      );
      const exemptButEmitted = Object.keys(NOT_PRODUCIBLE_IN_TESTS).filter((name) => emitted.has(name));
      const problems = [
        ...(never.length > 0
          ? [
              `catalogued events no test ever logged (write a scenario, or list the event with a reason in NOT_PRODUCIBLE_IN_TESTS in test/support/event-coverage.ts): ${never.join(', ')}`,
            ]
          : []),
        ...(exemptButEmitted.length > 0
          ? [
              `events listed as not producible in tests that a test did log (remove them from NOT_PRODUCIBLE_IN_TESTS): ${exemptButEmitted.join(', ')}`,
            ]
          : []),
      ];
      if (problems.length > 0) {
        process.stderr.write(
          `\nEvent catalogue coverage failed:\n${problems.map((problem) => `  - ${problem}`).join('\n')}\n`,
        );
        // A throw here is only printed by vitest; the exit status is what CI sees.
        process.exitCode = 1;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}
