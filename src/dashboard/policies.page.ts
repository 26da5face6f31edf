import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { isAppError } from '../shared/errors.js';
import { CreatePolicyInput, UpdatePolicyInput } from '../update-policies/index.js';
import type { DashboardServices } from './deps.js';
import { action, columns, page } from './layout.js';
import { createHoldReleaseRoute, policyPreviewSection } from './policy-preview.js';
import { setFlash, takeFlash, type DashboardEnv } from './session.js';

import { policyForm } from './policy-form.view.js';
import {
  EMPTY,
  KINDS,
  errorsOf,
  inputOf,
  postedValues,
  valuesOf,
  type Errors,
  type Policy,
  type Values,
} from './policy-form.values.js';
const kindsText = (policy: Policy) =>
  KINDS.filter(([kind]) => policy.settings.kinds[kind])
    .map(([kind]) => kind)
    .join(', ') || 'none';

/**
 * Update policies (automatic updates per site or tag, in maintenance windows): a list, and one
 * form to create or edit a policy whose problems are shown beside the fields, as typed.
 */
export function createPoliciesPages(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();
  const formPage = async (
    c: Context<DashboardEnv>,
    values: Values,
    errors: Errors,
    policy: Policy | null,
    status: 200 | 400 | 404 | 409 = 200,
  ) => {
    const preview =
      policy && Object.keys(errors).length === 0
        ? await policyPreviewSection(deps.updatePolicies, policy.id, c.get('session'))
        : '';
    return c.html(
      page({
        title: policy ? `Policy ${policy.name}` : 'New update policy',
        session: c.get('session'),
        current: '/updates',
        body: html`<p><a href="/updates/policies">← Update policies</a></p>
          <h1>${policy ? `Edit ${policy.name}` : 'New update policy'}</h1>
          ${policyForm(c.get('session'), values, errors, policy)} ${preview}`,
        flash: takeFlash(c),
      }),
      status,
    );
  };

  app.get('/updates/policies', async (c) => {
    const session = c.get('session');
    const policies = await deps.updatePolicies.list();
    const body = html`<p><a href="/updates">← Updates</a></p>
      <h1>Update policies</h1>
      <p><a href="/updates/policies/new">New policy</a></p>
      ${
        policies.length === 0
          ? html`<p class="muted">
              No policy yet: a policy updates a tag’s sites (or one site) by itself, in its maintenance window.
            </p>`
          : html`<div class="table-wrap">
              <table>
                ${columns('Policy', 'For', 'Updates', 'Window', 'Delay', 'Safe', 'Actions')}
                <tbody>
                  ${policies.map((policy) => {
                    const w = policy.settings.window;
                    return html`<tr>
                      <th scope="row">
                        <a href="/updates/policies/${policy.id}">${policy.name}</a>
                        ${policy.settings.enabled ? '' : html`<span class="badge none">disabled</span>`}
                      </th>
                      <td>
                        ${policy.siteId ? html`<a href="/sites/${policy.siteId}">site ${policy.siteId}</a>` : `tag ${policy.tag}`}
                      </td>
                      <td>${kindsText(policy)}</td>
                      <td>
                        ${w.days.join(', ')} ${w.start}–${w.end}
                        <span class="url">${w.timeZone ?? 'each site’s time zone'}</span>
                      </td>
                      <td class="num">${policy.settings.releaseDelayDays} d</td>
                      <td>
                        ${policy.settings.safe ? 'yes' : 'no'}
                        ${
                          policy.settings.safe && policy.settings.checks.visual.enabled
                            ? html`<span class="url"
                                >visual ${Number((policy.settings.checks.visual.threshold * 100).toFixed(2))} %,
                                ${policy.settings.checks.visual.rollback ? 'rolled back' : 'kept with a warning'}</span
                              >`
                            : ''
                        }
                      </td>
                      <td class="actions">
                        ${action(session, `/updates/policies/${policy.id}/delete`, 'Delete', { danger: true, confirm: 'Confirm' })}
                      </td>
                    </tr>`;
                  })}
                </tbody>
              </table>
            </div>`
      }`;
    return c.html(page({ title: 'Update policies', session, current: '/updates', body, flash: takeFlash(c) }));
  });

  app.route('/', createHoldReleaseRoute(deps.updatePolicies));
  app.get('/updates/policies/new', (c) => formPage(c, EMPTY, {}, null));
  app.get('/updates/policies/:id', async (c) => {
    const policy = await deps.updatePolicies.get(c.req.param('id'));
    return formPage(c, valuesOf(policy), {}, policy);
  });

  app.post('/updates/policies', async (c) => {
    const values = postedValues(await c.req.parseBody({ all: true }));
    const parsed = CreatePolicyInput.safeParse(inputOf(values));
    if (!parsed.success) return formPage(c, values, errorsOf(parsed.error.issues), null, 400);
    try {
      const policy = await deps.updatePolicies.create(parsed.data);
      setFlash(c, { kind: 'ok', text: `Policy ${policy.name} created.` });
      return c.redirect('/updates/policies', 303);
    } catch (error) {
      if (!isAppError(error)) throw error;
      return formPage(c, values, { form: error.detail }, null, error.problem.status === 409 ? 409 : 400);
    }
  });

  app.post('/updates/policies/:id', async (c) => {
    const policy = await deps.updatePolicies.get(c.req.param('id'));
    const values = postedValues(await c.req.parseBody({ all: true }));
    const parsed = UpdatePolicyInput.safeParse(inputOf(values, policy.settings.checks));
    if (!parsed.success) return formPage(c, values, errorsOf(parsed.error.issues), policy, 400);
    await deps.updatePolicies.replace(policy.id, parsed.data);
    setFlash(c, { kind: 'ok', text: `Policy ${parsed.data.name} saved.` });
    return c.redirect('/updates/policies', 303);
  });

  app.post('/updates/policies/:id/delete', async (c) => {
    const form = await c.req.parseBody();
    const policy = await deps.updatePolicies.get(c.req.param('id'));
    if (form.confirm !== 'yes') setFlash(c, { kind: 'error', text: 'Nothing deleted: tick the box to confirm.' });
    else {
      await deps.updatePolicies.remove(policy.id);
      setFlash(c, { kind: 'ok', text: `Policy ${policy.name} deleted.` });
    }
    return c.redirect('/updates/policies', 303);
  });
  return app;
}
