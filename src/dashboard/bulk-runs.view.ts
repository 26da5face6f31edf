import { html } from 'hono/html';
import { runWithinScope } from '../bulk-updates/index.js';
import type { SiteScope } from '../shared/actor.js';
import { isAppError } from '../shared/errors.js';
import type { DashboardServices } from './deps.js';
import { age, badge } from './format.js';
import { columns } from './layout.js';

/**
 * The Updates page's list of recent bulk updates (previews and runs, each with its state, its
 * sites' count and who started it), read for the request: to one limited to tags, only the runs
 * whose every site is in its scope.
 */

const RUNS_LISTED = 20;

/** Whether a request limited to tags may see the run: every one of its sites in its scope (runWithinScope). */
const runVisible = async (deps: Pick<DashboardServices, 'bulkUpdates' | 'sites'>, id: string, scope: SiteScope) => {
  try {
    await runWithinScope(await deps.bulkUpdates.run(id), scope, deps.sites);
    return true;
  } catch (error) {
    if (!isAppError(error)) throw error;
    return false;
  }
};

/**
 * The list of recent bulk updates on the Updates page; to a request limited to tags, those of the recent
 * ones whose every site is in its scope.
 */
export async function runHistory(
  deps: Pick<DashboardServices, 'bulkUpdates' | 'sites'>,
  names: (trigger: { kind: string; id: string | null }) => string,
  now: number,
  scope: SiteScope,
) {
  const recent = await deps.bulkUpdates.runs(RUNS_LISTED);
  const shown = scope.kind === 'all' ? [] : await Promise.all(recent.map((run) => runVisible(deps, run.id, scope)));
  const runs = scope.kind === 'all' ? recent : recent.filter((_, index) => shown[index]);
  return html`<section class="card" aria-labelledby="runs-h">
    <h2 id="runs-h">Bulk updates</h2>
    ${
      runs.length === 0
        ? html`<p class="muted">No bulk update yet: select items or sites above, then Preview.</p>`
        : html`<div class="table-wrap">
            <table>
              ${columns('Run', 'State', 'Sites', 'Started by', 'Created')}
              <tbody>
                ${runs.map(
                  (run) =>
                    html`<tr>
                      <th scope="row">
                        <a href="/updates/runs/${run.id}"
                          >${run.dryRun ? 'Preview' : run.safe ? 'Safe update' : 'Update'}</a
                        ><span class="url">${run.id}</span>
                      </th>
                      <td>${run.dryRun ? html`<span class="badge none">preview</span>` : badge(run.state)}</td>
                      <td class="num">
                        ${run.dryRun ? run.sites : `${run.done} of ${run.sites} (${run.succeeded} ok, ${run.failed} failed)`}
                      </td>
                      <td>${names(run.trigger)}</td>
                      <td>${age(run.createdAt, now)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
  </section>`;
}
