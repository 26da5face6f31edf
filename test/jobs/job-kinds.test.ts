import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../support/test-app.js';

/** `GET /api/jobs` says which kinds there are: every kind a feature registers, and no other. */
describe('job kinds in the API description', () => {
  const t = createTestApp();
  afterAll(() => t.close());

  it('names every registered kind in the `kind` filter and field', async () => {
    const document = (await t.call('GET', '/api/openapi.json', { token: t.readToken })).json as {
      paths: Record<string, { get?: { parameters?: { name: string; description?: string }[] } }>;
      components: { schemas: Record<string, { properties?: Record<string, { description?: string }> }> };
    };
    const filter = document.paths['/jobs']?.get?.parameters?.find((p) => p.name === 'kind')?.description ?? '';
    const field = document.components.schemas.Job?.properties?.kind?.description ?? '';
    const registered = t.services.jobs.kindNames();
    expect(registered.length).toBeGreaterThan(5);
    for (const kind of registered) {
      expect(filter, `the kind filter names ${kind}`).toContain(`\`${kind}\``);
      expect(field, `the kind field names ${kind}`).toContain(`\`${kind}\``);
    }
    const named = [...filter.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]);
    expect(named.sort()).toEqual([...registered].sort());
  });
});
