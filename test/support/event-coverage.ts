import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { eventCatalogue } from '../../src/shared/events.js';

/**
 * Keeps the event catalogue honest at run time: every catalogued event a test logs must carry
 * its documented fields at its documented level, and over a whole `vitest run` every catalogued
 * event must be logged by some real scenario (test/support/event-coverage-setup.ts checks that
 * at the end of the run).
 */

/** Events no test can produce, each with the reason. Keep this list tiny. */
export const NOT_PRODUCIBLE_IN_TESTS: Record<string, string> = {};

const catalogue: Record<string, { level: string; fields: readonly string[] }> = eventCatalogue;
const violations: string[] = [];

/** What is wrong with a logged record, if it names a catalogued event (null when nothing is). */
export function catalogueViolation(record: Record<string, unknown>): string | null {
  const name = record.event;
  if (typeof name !== 'string') return null;
  const entry = catalogue[name];
  if (!entry) return `"${name}" is not in the event catalogue`;
  const missing = entry.fields.filter((field) => !(field in record));
  if (missing.length > 0) return `${name} was logged without its documented field(s) ${missing.join(', ')}`;
  if (record.level !== entry.level)
    return `${name} was logged at ${String(record.level)}, the catalogue says ${entry.level}`;
  return null;
}

/** Checks a captured JSON log line and notes the event it names as emitted. */
export function observeLogRecord(record: Record<string, unknown>): void {
  const violation = catalogueViolation(record);
  if (violation) violations.push(violation);
  if (typeof record.event === 'string') noteEmitted([record.event]);
}

/** The field violations seen since the last call (checked after every test). */
export function takeViolations(): string[] {
  return violations.splice(0);
}

/** Records event names for the end-of-run check; from the daemon processes' output too. */
export function noteEmitted(names: string[]): void {
  const dir = emittedDir();
  if (!dir || names.length === 0) return;
  appendFileSync(join(dir, `events-${process.pid}.txt`), names.map((name) => `${name}\n`).join(''));
}

export function noteTestFile(path: string): void {
  const dir = emittedDir();
  if (dir) appendFileSync(join(dir, `files-${process.pid}.txt`), `${path}\n`);
}

/** Event names in a process's JSON-lines output. */
export function eventsInOutput(output: string): string[] {
  return [...output.matchAll(/"event":"([a-z_.-]+)"/g)].map((match) => match[1]!);
}

function emittedDir(): string | undefined {
  try {
    return inject('emittedEventsDir');
  } catch {
    return undefined; // not inside a vitest worker
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where test workers write the events they saw logged and the test files they ran. */
    emittedEventsDir: string;
  }
}
