import { Hono } from 'hono';
import { html } from 'hono/html';
import type { SignedInSession } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { count } from './format.js';
import { action, columns } from './layout.js';
import { flashOutcome, type DashboardEnv } from './session.js';

const SITES_SHOWN = 50;
const utc = (date: Date) => `${date.toISOString().replace('T', ' ').slice(0, 16)} UTC`;
const item = (target: { type: string; slug?: string | null; version?: string | null }) =>
  `${target.type}${target.slug ? ` ${target.slug}` : ''}${target.version ? ` → ${target.version}` : ''}`;

type Plan = Awaited<ReturnType<DashboardServices['updatePolicies']['preview']>>['plans'][number];
type Skip = Plan['skipped'][number];

/** A skipped offer and why; a held version says when and why it was rolled back, with a Release button. */
function skippedItem(session: SignedInSession, policyId: string, skip: Skip) {
  const { hold } = skip;
  if (!hold)
    return html`<span class="url"
      >${item(skip)}: ${skip.reason}${skip.eligibleAt ? ` until ${utc(skip.eligibleAt)}` : ''}</span
    >`;
  const why = [hold.reason, hold.message].filter(Boolean).join(': ') || 'no reason recorded';
  return html`<div>
    <span class="url"
      >${item(skip)}: held, ${hold.outcome === 'rollback-failed' ? 'its rollback failed' : 'rolled back'}
      ${utc(hold.heldAt)} (${why})</span
    >
    ${action(session, `/updates/policies/${policyId}/holds/${hold.id}/release`, 'Release')}
  </div>`;
}

/** A policy's dry run on its page: per site it governs, its window (open now, or the next) and what would be applied or skipped. */
export async function policyPreviewSection(
  updatePolicies: DashboardServices['updatePolicies'],
  policyId: string,
  session: SignedInSession,
) {
  const { plans } = await updatePolicies.preview(policyId, { limit: SITES_SHOWN });
  const shown = plans.slice(0, SITES_SHOWN);
  return html`<section class="card" id="policy-preview" aria-labelledby="policy-preview-h">
    <h2 id="policy-preview-h">What it would do</h2>
    ${
      shown.length === 0
        ? html`<p class="muted">
            No connected site is governed by this policy (a site’s own policy wins over its tags’).
          </p>`
        : html`<div class="table-wrap">
            <table>
              <caption>
                ${plans.length > SITES_SHOWN ? `The first ${SITES_SHOWN} sites` : count(shown.length, 'site')}
              </caption>
              ${columns('Site', 'Window', 'Would update', 'Skipped')}
              <tbody>
                ${shown.map(
                  (plan) =>
                    html`<tr>
                      <th scope="row"><a href="/sites/${plan.siteId}">${plan.url}</a></th>
                      <td>
                        ${plan.openWindow ? html`<strong>open now</strong>, until` : 'next:'}
                        ${plan.openWindow ? utc(plan.window.end) : `${utc(plan.window.start)} – ${utc(plan.window.end)}`}
                        <span class="url"
                          >time zone ${plan.timeZone}
                          (${plan.timeZoneSource === 'default' ? 'none given: UTC' : `the ${plan.timeZoneSource}’s`})${
                            plan.alreadyRun ? ', already run in this window' : ''
                          }</span
                        >
                      </td>
                      <td>
                        ${plan.updates.length === 0 ? html`<span class="muted">nothing</span>` : plan.updates.map(item).join(', ')}
                      </td>
                      <td>${plan.skipped.map((skip) => skippedItem(session, policyId, skip))}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
  </section>`;
}

/** The Release button of a held version: policies apply it on that site again; back to the policy's page. */
export function createHoldReleaseRoute(updatePolicies: DashboardServices['updatePolicies']) {
  return new Hono<DashboardEnv>().post('/updates/policies/:id/holds/:holdId/release', async (c) => {
    await flashOutcome(c, async () => {
      const hold = await updatePolicies.holds.release(c.req.param('holdId'), c.get('actor'));
      return `Released ${hold.type} ${hold.slug} ${hold.version}: the policy applies it again from its next window.`;
    });
    return c.redirect(`/updates/policies/${encodeURIComponent(c.req.param('id'))}#policy-preview`, 303);
  });
}
