#!/usr/bin/env node
/**
 * Writes the configuration's documentation from its declarations (issue 34): each `SITEWARDEN_*` variable
 * is declared once, next to its feature (src/shared/settings.ts; src/config.ts lists them in order as
 * `SETTINGS`), and from those this writes
 *
 *   docs/configuration.md           the table between `<!-- settings:start -->` and `<!-- settings:end -->`
 *   systemd/sitewarden.env.example  everything below its header: each variable commented out with its
 *                                   default (or an example), under the comment of its block
 *   README.md                       the short table between `<!-- settings:readme:start -->` and
 *                                   `<!-- settings:readme:end -->`: the variables declared with a `readme` text
 *
 *   npm run docs:configuration              rewrite them
 *   npm run docs:configuration -- --check   exit 1, naming each file that differs (`npm run lint` runs it)
 *
 * test/configuration-doc.test.ts runs the same check.
 */
import console from 'node:console';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const PAGE = 'docs/configuration.md';
export const EXAMPLE = 'systemd/sitewarden.env.example';
export const README = 'README.md';

/** A family's variables are declared as those of one member: `SITEWARDEN_TARGET_NAME_TYPE` for target `name`. */
const FAMILY = 'SITEWARDEN_TARGET_NAME_';
/** In the docs, `SITEWARDEN_TARGET_<NAME>_TYPE`; in the example file, the target of the example, `offsite`. */
const documented = (name) => name.replace(FAMILY, 'SITEWARDEN_TARGET_<NAME>_');
const exampled = (name) => name.replace(FAMILY, 'SITEWARDEN_TARGET_OFFSITE_');

const EXAMPLE_HEADER = `# Sitewarden configuration, read by systemd from /etc/sitewarden/sitewarden.env.
# Every variable is optional; the values shown are the defaults (an example where there is none).
`;

/** The declarations, as src/config.ts composes them (TypeScript, loaded with tsx). */
export async function settingsDeclarations(root = ROOT) {
  const { tsImport } = await import('tsx/esm/api');
  const { SETTINGS } = await tsImport(pathToFileURL(join(root, 'src/config.ts')).href, import.meta.url);
  return SETTINGS;
}

const entries = (groups) => groups.flatMap((group) => Object.entries(group));
const cell = (text) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const defaultCell = (setting) => (setting.default !== undefined ? `\`${setting.default}\`` : setting.defaultText);

function table(rows) {
  return [
    '| variable | default | meaning |',
    '|---|---|---|',
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ];
}

/** docs/configuration.md's table: every variable. */
export function pageTable(groups) {
  return table(entries(groups).map(([name, s]) => [`\`${documented(name)}\``, defaultCell(s), s.doc])).join('\n');
}

/** The README's table: the variables with a `readme` text. */
export function readmeTable(groups) {
  const rows = entries(groups).filter(([, s]) => s.readme !== undefined);
  return table(rows.map(([name, s]) => [`\`${documented(name)}\``, defaultCell(s), s.readme])).join('\n');
}

/** systemd/sitewarden.env.example, whole. */
export function exampleFile(groups) {
  const lines = [];
  for (const [name, s] of entries(groups)) {
    if (s.comment !== undefined) lines.push('', ...s.comment.split('\n').map((line) => `# ${line}`));
    lines.push(`#${exampled(name)}=${s.default ?? s.example ?? ''}`);
  }
  return `${EXAMPLE_HEADER}${lines.join('\n')}\n`;
}

/** `text` with what lies between the two markers replaced by `content` (markers kept, on lines of their own). */
export function between(text, marker, content, file) {
  const start = `<!-- ${marker}:start -->`;
  const end = `<!-- ${marker}:end -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${file} has no ${start} … ${end} section.`);
  return `${text.slice(0, from)}${start}\n${content}\n${text.slice(to)}`;
}

/**
 * What each generated file should hold, given what it holds now (`read(path)`).
 * @returns {Array<{ path: string, now: string, wanted: string }>}
 */
export function configurationFiles(groups, read = (path) => readFileSync(join(ROOT, path), 'utf8')) {
  const page = read(PAGE);
  const readme = read(README);
  return [
    { path: PAGE, now: page, wanted: between(page, 'settings', pageTable(groups), PAGE) },
    { path: EXAMPLE, now: read(EXAMPLE), wanted: exampleFile(groups) },
    { path: README, now: readme, wanted: between(readme, 'settings:readme', readmeTable(groups), README) },
  ];
}

async function main() {
  const files = configurationFiles(await settingsDeclarations());
  const stale = files.filter((file) => file.now !== file.wanted);
  if (process.argv.includes('--check')) {
    for (const file of stale)
      console.error(`${file.path} is not what the settings declarations give: run npm run docs:configuration.`);
    if (stale.length > 0) process.exit(1);
    return;
  }
  for (const file of stale) {
    writeFileSync(join(ROOT, file.path), file.wanted);
    console.log(`wrote ${file.path}`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
