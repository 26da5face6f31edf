import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [readFileSync(path, 'utf8')] : [];
  });
}

describe('the documentation stays true', () => {
  const code = sources(join(root, 'src')).join('\n');

  it('lists every problem type the code defines, with its status', () => {
    const defined = [...code.matchAll(/defineProblem\('([a-z-]+)', (\d{3}),/g)].map((match) => ({
      name: match[1]!,
      status: match[2]!,
    }));
    expect(defined.length).toBeGreaterThan(20);
    for (const { name, status } of defined) {
      expect(readme, name).toMatch(new RegExp(`\\| \`[^|]*\\b${name}\\b[^|]*\` \\| ${status} \\|`));
    }
  });

  it('documents every configuration variable in the README and the example env file', () => {
    const example = readFileSync(join(root, 'systemd/sitewarden.env.example'), 'utf8');
    const variables = [
      ...new Set(
        [...readFileSync(join(root, 'src/config.ts'), 'utf8').matchAll(/\b(SITEWARDEN_[A-Z_]+):/g)].map(
          (match) => match[1]!,
        ),
      ),
    ];
    expect(variables.length).toBeGreaterThan(8);
    for (const variable of variables) {
      expect(readme, variable).toContain(`\`${variable}\``);
      expect(example, variable).toContain(variable);
    }
  });

  it('keeps .ci/run on the README’s test line', () => {
    expect(readme).toContain('bash scripts/test.sh');
    expect(readFileSync(join(root, '.ci/run'), 'utf8')).toMatch(/^bash scripts\/test\.sh$/m);
  });
});
