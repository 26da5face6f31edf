import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const apiPage = readFileSync(join(root, 'docs/api.md'), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [readFileSync(path, 'utf8')] : [];
  });
}

describe('the documentation stays true', () => {
  const code = sources(join(root, 'src')).join('\n');

  it('lists every problem type the code defines, with its status (docs/api.md)', () => {
    const defined = [...code.matchAll(/defineProblem\('([a-z-]+)', (\d{3}),/g)].map((match) => ({
      name: match[1]!,
      status: match[2]!,
    }));
    expect(defined.length).toBeGreaterThan(20);
    for (const { name, status } of defined) {
      expect(apiPage, name).toMatch(new RegExp(`\\| \`[^|]*\\b${name}\\b[^|]*\` \\| ${status} \\|`));
    }
  });

  // Every configuration variable, written from its declaration into docs/configuration.md, the example env file and
  // the README: test/configuration-doc.test.ts.

  it('keeps .ci/run on the README’s test line', () => {
    expect(readme).toContain('bash scripts/test.sh');
    expect(readFileSync(join(root, '.ci/run'), 'utf8')).toMatch(/^bash scripts\/test\.sh$/m);
  });

  it('links every page of docs/ from the README, and every relative link in them leads somewhere', () => {
    const pages = markdownFiles(join(root, 'docs')).map((path) => relative(root, path));
    expect(pages).toEqual(expect.arrayContaining(['docs/architecture.md', 'docs/benchmarks.md', 'docs/events.md']));
    const linked = new Set<string>();
    for (const file of ['README.md', ...pages]) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split('#');
        const page = path ? resolve(dirname(join(root, file)), path) : join(root, file);
        expect(existsSync(page), `${file} links ${target}`).toBe(true);
        linked.add(relative(root, page));
        if (anchor) expect(headingAnchors(page), `${file} links ${target}`).toContain(anchor);
      }
    }
    for (const page of pages) expect(linked, `${page} is linked from the README or another page`).toContain(page);
    const fromReadme = [...readme.matchAll(/\]\((docs\/[^)#\s]*)/g)].map((match) => match[1]!);
    for (const page of pages.filter((page) => !page.startsWith('docs/design/')))
      expect(fromReadme, `README links ${page}`).toContain(page);
  });

  // Every module of src/ in the architecture page's tables and diagram: test/architecture-doc.test.ts.
});

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? markdownFiles(path) : path.endsWith('.md') ? [path] : [];
  });
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens. */
function headingAnchors(path: string): string[] {
  return [...readFileSync(path, 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((match) =>
    match[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N} -]/gu, '')
      .replace(/ /g, '-'),
  );
}
