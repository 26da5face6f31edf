import { relative, resolve } from 'node:path';
import { afterEach, beforeAll, expect } from 'vitest';
import { noteTestFile, takeViolations } from './event-coverage.js';

// Runs in every test file (vitest setupFiles).
const ROOT = resolve(import.meta.dirname, '../..');

beforeAll(() => {
  const path = expect.getState().testPath;
  if (path) noteTestFile(relative(ROOT, path));
});

afterEach(() => {
  const violations = takeViolations();
  if (violations.length > 0)
    throw new Error(`logged events that do not match docs/events.md:\n${violations.join('\n')}`);
});
