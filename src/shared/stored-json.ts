import type { z } from 'zod';
import { defineProblem } from './errors.js';

/**
 * JSON the daemon wrote itself (job params and progress, inventory lists, safe update reports, scratch
 * files, worker messages) is read back with the schema that describes what was written, never cast:
 * a row damaged on disk, or written by an older version in a shape this one no longer reads, fails
 * here with what could not be read, not later with a TypeError deep in a feature.
 */
export const storedDataProblems = {
  // Not a 500: the request was understood and the daemon works, the record it names cannot be read.
  unreadable: defineProblem('stored-data-unreadable', 409, 'Data the daemon stored could not be read'),
};

/** `text` parsed as JSON and checked against `schema`; `what` names it in the error (`the params of job …`). */
export function parseStored<S extends z.ZodType>(schema: S, text: string, what: string): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw storedDataProblems.unreadable.create(`${what} could not be read: it is not JSON`, {}, { cause: error });
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const at = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  throw storedDataProblems.unreadable.create(
    `${what} could not be read${at}: ${issue?.message ?? 'invalid'}`,
    {},
    {
      cause: parsed.error,
    },
  );
}

/** `parseStored`, null when unreadable: for what only describes a record (an event's fields, a recovery at start). */
export function parseStoredOrNull<S extends z.ZodType>(schema: S, text: string): z.output<S> | null {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
