import { z } from 'zod';

/**
 * One environment variable, declared once next to the feature that reads it (issue 34): how it is parsed
 * and its default (the zod schema), and what the documentation says of it. src/config.ts composes the
 * declarations into the schema `loadConfig` checks; `npm run docs:configuration`
 * (scripts/configuration-doc.mjs) writes docs/configuration.md's table, systemd/sitewarden.env.example
 * and the README's short table from them, and test/configuration-doc.test.ts holds them equal.
 */
interface Setting {
  /**
   * Parses the variable's value (absent or empty: undefined, so the default applies). Absent for variables
   * a feature's own parser reads with the others they go with (offsite targets, single sign-on, CHROME_PATH).
   */
  readonly schema?: z.ZodType;
  /** The default as it would be written in the environment (`8080`); tested to be the real default. */
  readonly default?: string;
  /** The default in words, when it is not a value (`http://HOST:PORT`, unset): Markdown. */
  readonly defaultText?: string;
  /** The value shown in the example env file when there is no default value. */
  readonly example?: string;
  /** The meaning, for docs/configuration.md's table: one paragraph of Markdown (links relative to docs/). */
  readonly doc: string;
  /** The shorter meaning for the README's table; only the handful most installations set have one. */
  readonly readme?: string;
  /** Comment lines written above the variable in systemd/sitewarden.env.example (a block's explanation). */
  readonly comment?: string;
}

/** A feature's variables, by name (`SITEWARDEN_…`, or `SITEWARDEN_TARGET_<NAME>_…` for a family), in order. */
export type Settings = Readonly<Record<string, Setting>>;

export const defineSettings = <const T extends Settings>(settings: T): T => settings;

/** The zod schemas of the declarations that have one, by variable name, for src/config.ts's z.object. */
export function schemasOf<const T extends Settings>(
  settings: T,
): { [K in keyof T as T[K] extends { schema: z.ZodType } ? K : never]: T[K] extends { schema: infer S } ? S : never } {
  return Object.fromEntries(
    Object.entries(settings).flatMap(([name, setting]) => (setting.schema ? [[name, setting.schema]] : [])),
  ) as never;
}

export const positiveInt = (name: string, fallback: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce
    .number({ error: `${name} must be a whole number` })
    .int(`${name} must be a whole number`)
    .min(1, `${name} must be at least 1`)
    .max(max, `${name} must be at most ${max}`)
    .default(fallback);

/** A whole number from 0 (`min` and `max` without a message of their own, as zod words them). */
export const wholeNumber = (name: string, fallback: number, max: number) =>
  z.coerce
    .number({ error: `${name} must be a whole number` })
    .int(`${name} must be a whole number`)
    .min(0)
    .max(max)
    .default(fallback);

export const onOff = (name: string) =>
  z
    .enum(['on', 'off'], { error: `${name} must be on or off` })
    .default('on')
    .transform((value) => value === 'on');
