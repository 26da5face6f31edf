import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { isAppError } from '../shared/errors.js';
import { CreatePolicyInput, UpdatePolicyInput } from '../update-policies/index.js';
import type { SignedInSession } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { action, columns, csrfField, page } from './layout.js';
import { createHoldReleaseRoute, policyPreviewSection } from './policy-preview.js';
import { setFlash, takeFlash, type DashboardEnv } from './session.js';

type Policy = ReturnType<DashboardServices['updatePolicies']['get']>;
type Form = Record<string, string | File | (string | File)[]>;
/** Field name → the first problem with it; `form` for what concerns the whole form. */
type Errors = Record<string, string>;

const DAYS = [
  ['mon', 'Monday'],
  ['tue', 'Tuesday'],
  ['wed', 'Wednesday'],
  ['thu', 'Thursday'],
  ['fri', 'Friday'],
  ['sat', 'Saturday'],
  ['sun', 'Sunday'],
] as const;
const KINDS = [
  ['plugins', 'Plugins'],
  ['themes', 'Themes'],
  ['translations', 'Translations'],
  ['coreMinor', 'WordPress maintenance releases (6.5.3 → 6.5.5)'],
  ['coreMajor', 'WordPress feature releases (6.5 → 6.6)'],
] as const;
const MAX_LINES = 500;

/** What the form shows: a stored policy, or what was posted (kept as typed when it was refused). */
interface Values {
  name: string;
  scope: 'site' | 'tag';
  siteId: string;
  tag: string;
  priority: string;
  enabled: boolean;
  kinds: Set<string>;
  days: Set<string>;
  start: string;
  end: string;
  timeZone: string;
  releaseDelayDays: string;
  safe: boolean;
  /** The safe updates' visual check: on, the threshold in % of a page's pixels, and rolling back beyond it. */
  visual: boolean;
  visualThreshold: string;
  visualRollback: boolean;
  pins: string;
  ignore: string;
}

const EMPTY: Values = {
  name: '',
  scope: 'tag',
  siteId: '',
  tag: '',
  priority: '0',
  enabled: true,
  kinds: new Set(['plugins', 'themes', 'translations', 'coreMinor']),
  days: new Set(['mon', 'tue', 'wed', 'thu', 'fri']),
  start: '02:00',
  end: '05:00',
  timeZone: '',
  releaseDelayDays: '0',
  safe: true,
  visual: true,
  visualThreshold: '3',
  // Unattended: a page that changed beyond the threshold is rolled back by default.
  visualRollback: true,
  pins: '',
  ignore: '',
};

function valuesOf(policy: Policy): Values {
  const s = policy.settings;
  return {
    name: policy.name,
    scope: policy.siteId ? 'site' : 'tag',
    siteId: policy.siteId ?? '',
    tag: policy.tag ?? '',
    priority: String(policy.priority),
    enabled: s.enabled,
    kinds: new Set(Object.entries(s.kinds).flatMap(([kind, on]) => (on ? [kind] : []))),
    days: new Set(s.window.days),
    start: s.window.start,
    end: s.window.end,
    timeZone: s.window.timeZone ?? '',
    releaseDelayDays: String(s.releaseDelayDays),
    safe: s.safe,
    visual: s.checks.visual.enabled,
    visualThreshold: String(Number((s.checks.visual.threshold * 100).toFixed(4))),
    visualRollback: s.checks.visual.rollback,
    pins: s.pins.map((pin) => `${pin.type} ${pin.slug} ${pin.version}`).join('\n'),
    ignore: s.ignore.map((item) => `${item.type} ${item.slug}`).join('\n'),
  };
}

function postedValues(form: Form): Values {
  const one = (name: string) => {
    const value = form[name];
    return typeof value === 'string' ? value.trim().slice(0, 20_000) : '';
  };
  const many = (name: string) =>
    new Set(([] as unknown[]).concat(form[name] ?? []).filter((v): v is string => typeof v === 'string'));
  return {
    name: one('name'),
    scope: one('scope') === 'site' ? 'site' : 'tag',
    siteId: one('siteId'),
    tag: one('tag').toLowerCase(),
    priority: one('priority'),
    enabled: one('enabled') === '1',
    kinds: many('kinds'),
    days: many('days'),
    start: one('start'),
    end: one('end'),
    timeZone: one('timeZone'),
    releaseDelayDays: one('releaseDelayDays'),
    safe: one('safe') === '1',
    visual: one('visual') === '1',
    visualThreshold: one('visualThreshold'),
    visualRollback: one('visualRollback') === '1',
    pins: one('pins'),
    ignore: one('ignore'),
  };
}

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((parts) => parts[0] !== '')
    .slice(0, MAX_LINES);
const number = (text: string) => (text === '' ? undefined : Number(text));

/**
 * The request body the API would take, from the form (zod then says what is wrong, field by field); `checks` keeps
 * what the form does not show (URLs, keyword, timings set through the API) from the stored policy.
 */
function inputOf(values: Values, stored?: Policy['settings']['checks']) {
  const threshold = number(values.visualThreshold);
  return {
    name: values.name,
    ...(values.scope === 'site' ? { siteId: values.siteId || undefined } : { tag: values.tag || undefined }),
    priority: number(values.priority),
    enabled: values.enabled,
    kinds: Object.fromEntries(KINDS.map(([kind]) => [kind, values.kinds.has(kind)])),
    window: {
      days: [...values.days],
      start: values.start,
      end: values.end,
      timeZone: values.timeZone === '' ? null : values.timeZone,
    },
    releaseDelayDays: number(values.releaseDelayDays),
    safe: values.safe,
    checks: {
      ...stored,
      visual: {
        enabled: values.visual,
        threshold: threshold === undefined ? undefined : threshold / 100,
        rollback: values.visualRollback,
      },
    },
    pins: lines(values.pins).map(([type, slug, version]) => ({ type, slug, version })),
    ignore: lines(values.ignore).map(([type, slug]) => ({ type, slug })),
  };
}

/** zod's issues as one message per form field: `window.start`, `pins` (with its line), … */
function errorsOf(issues: { path: PropertyKey[]; message: string }[]): Errors {
  const errors: Errors = {};
  for (const issue of issues) {
    const [head, second] = issue.path.map(String);
    const field =
      head === 'window' && second
        ? second
        : head === 'checks'
          ? 'visualThreshold'
          : head === 'siteId' || head === 'tag'
            ? 'scope'
            : (head ?? 'form');
    const where = (head === 'pins' || head === 'ignore') && second !== undefined ? `line ${Number(second) + 1}: ` : '';
    errors[field] ??= `${where}${issue.message}`;
  }
  return errors;
}

function field(errors: Errors, name: string, label: string, control: (describedBy: string) => unknown, hint = '') {
  const error = errors[name];
  const ids = [hint ? `${name}-hint` : '', error ? `${name}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field${error ? ' invalid' : ''}">
    <label for="${name}">${label}</label>
    ${control(ids)} ${hint ? html`<span class="hint" id="${name}-hint">${hint}</span>` : ''}
    ${error ? html`<span class="field-error" id="${name}-error">✗ ${error}</span>` : ''}
  </div>`;
}

function checkboxes(name: string, options: readonly (readonly [string, string])[], checked: Set<string>) {
  return options.map(
    ([value, label]) =>
      html`<label class="check"
        ><input type="checkbox" name="${name}" value="${value}" ${checked.has(value) ? 'checked' : ''} />
        ${label}</label
      >`,
  );
}

function policyForm(session: SignedInSession, values: Values, errors: Errors, policy: Policy | null) {
  const input =
    (name: keyof Values, type = 'text', extra = '') =>
    (describedBy: string) =>
      html`<input
        id="${name}"
        name="${name}"
        type="${type}"
        value="${String(values[name])}"
        ${describedBy ? html`aria-describedby="${describedBy}"` : ''}
        ${errors[name] ? 'aria-invalid="true"' : ''}
        ${extra}
      />`;
  const textarea = (name: 'pins' | 'ignore') => (describedBy: string) =>
    html`<textarea id="${name}" name="${name}" rows="3" aria-describedby="${describedBy}">${values[name]}</textarea>`;
  const group = (name: string, legend: string, body: unknown) =>
    html`<fieldset
      class="${errors[name] ? 'invalid' : ''}"
      ${errors[name] ? html`aria-describedby="${name}-error"` : ''}
    >
      <legend>${legend}</legend>
      ${body} ${errors[name] ? html`<span class="field-error" id="${name}-error">✗ ${errors[name]}</span>` : ''}
    </fieldset>`;
  const count = Object.keys(errors).length;
  return html`${
      count > 0
        ? html`<div class="flash error" role="alert" id="form-errors">
            ${errors.form ?? `The policy was not saved: ${count === 1 ? 'one field needs' : `${count} fields need`} a change.`}
          </div>`
        : ''
    }
    <form
      class="card policy-form"
      method="post"
      action="${policy ? `/updates/policies/${policy.id}` : '/updates/policies'}"
      novalidate
    >
      ${csrfField(session)} ${field(errors, 'name', 'Name', input('name', 'text', 'required maxlength="200"'))}
      ${
        policy
          ? html`<p>
              For
              ${policy.siteId ? html`site <a href="/sites/${policy.siteId}">${policy.siteId}</a>` : `tag ${policy.tag}`}
              (fixed once created).
            </p>`
          : group(
              'scope',
              'Applies to',
              html`<label class="check"
                  ><input type="radio" name="scope" value="tag" ${values.scope === 'tag' ? 'checked' : ''} /> The sites
                  with the tag</label
                >
                <label for="tag" class="visually-hidden">Tag</label><input id="tag" name="tag" value="${values.tag}" />
                <label class="check"
                  ><input type="radio" name="scope" value="site" ${values.scope === 'site' ? 'checked' : ''} /> One
                  site, by id</label
                >
                <label for="siteId" class="visually-hidden">Site id</label
                ><input id="siteId" name="siteId" value="${values.siteId}" />`,
            )
      }
      ${group('kinds', 'Updates applied automatically', checkboxes('kinds', KINDS, values.kinds))}
      ${group(
        'days',
        'Maintenance window',
        html`${checkboxes('days', DAYS, values.days)} ${field(errors, 'start', 'Opens at', input('start', 'time'))}
        ${field(errors, 'end', 'Closes at', input('end', 'time'), 'At or before the opening time: the next day.')}
        ${field(
          errors,
          'timeZone',
          'Time zone',
          input('timeZone', 'text', 'placeholder="each site’s own"'),
          'Empty: each site’s own (from WordPress, UTC when it does not say); or an IANA name such as Europe/Berlin, or UTC+05:30.',
        )}`,
      )}
      ${field(
        errors,
        'releaseDelayDays',
        'Release delay (days)',
        input('releaseDelayDays', 'number', 'min="0" max="365"'),
        'Only versions first offered at least this many days ago.',
      )}
      ${field(
        errors,
        'pins',
        'Pins',
        textarea('pins'),
        'One a line: type slug version (plugin woocommerce 8.9.3): never updated past that version.',
      )}
      ${field(errors, 'ignore', 'Ignored', textarea('ignore'), 'One a line: type slug (theme twentytwentyfour): never updated automatically.')}
      ${field(errors, 'priority', 'Priority', input('priority', 'number', 'min="-1000" max="1000"'), 'Among tag policies for one site, the highest wins.')}
      <div class="checks">
        <label class="check"
          ><input type="checkbox" name="safe" value="1" ${values.safe ? 'checked' : ''} /> Safe updates (checks,
          screenshots, rollback)</label
        >
      </div>
      ${group(
        'visual',
        'Visual check of the safe updates',
        html`<label class="check"
            ><input type="checkbox" name="visual" value="1" ${values.visual ? 'checked' : ''} /> Compare screenshots
            before and after</label
          >
          ${field(
            errors,
            'visualThreshold',
            'Threshold (% of a page’s pixels)',
            input('visualThreshold', 'number', 'min="0" max="100" step="0.1"'),
            'A page that changed on more of its pixels than this looks different.',
          )}
          <label class="check"
            ><input type="checkbox" name="visualRollback" value="1" ${values.visualRollback ? 'checked' : ''} /> Roll
            back an update that changes a page beyond the threshold (otherwise kept, with a warning)</label
          >`,
      )}
      <div class="checks">
        <label class="check"
          ><input type="checkbox" name="enabled" value="1" ${values.enabled ? 'checked' : ''} /> Enabled</label
        >
      </div>
      <div><button type="submit">${policy ? 'Save policy' : 'Create policy'}</button></div>
    </form>`;
}

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
  const formPage = (
    c: Context<DashboardEnv>,
    values: Values,
    errors: Errors,
    policy: Policy | null,
    status: 200 | 400 | 404 | 409 = 200,
  ) =>
    c.html(
      page({
        title: policy ? `Policy ${policy.name}` : 'New update policy',
        session: c.get('session'),
        current: '/updates',
        body: html`<p><a href="/updates/policies">← Update policies</a></p>
          <h1>${policy ? `Edit ${policy.name}` : 'New update policy'}</h1>
          ${policyForm(c.get('session'), values, errors, policy)}
          ${policy && Object.keys(errors).length === 0 ? policyPreviewSection(deps.updatePolicies, policy.id, c.get('session')) : ''}`,
        flash: takeFlash(c),
      }),
      status,
    );

  app.get('/updates/policies', (c) => {
    const session = c.get('session');
    const policies = deps.updatePolicies.list();
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
  app.get('/updates/policies/:id', (c) => {
    const policy = deps.updatePolicies.get(c.req.param('id'));
    return formPage(c, valuesOf(policy), {}, policy);
  });

  app.post('/updates/policies', async (c) => {
    const values = postedValues(await c.req.parseBody({ all: true }));
    const parsed = CreatePolicyInput.safeParse(inputOf(values));
    if (!parsed.success) return formPage(c, values, errorsOf(parsed.error.issues), null, 400);
    try {
      const policy = deps.updatePolicies.create(parsed.data);
      setFlash(c, { kind: 'ok', text: `Policy ${policy.name} created.` });
      return c.redirect('/updates/policies', 303);
    } catch (error) {
      if (!isAppError(error)) throw error;
      return formPage(c, values, { form: error.detail }, null, error.problem.status === 409 ? 409 : 400);
    }
  });

  app.post('/updates/policies/:id', async (c) => {
    const policy = deps.updatePolicies.get(c.req.param('id'));
    const values = postedValues(await c.req.parseBody({ all: true }));
    const parsed = UpdatePolicyInput.safeParse(inputOf(values, policy.settings.checks));
    if (!parsed.success) return formPage(c, values, errorsOf(parsed.error.issues), policy, 400);
    deps.updatePolicies.replace(policy.id, parsed.data);
    setFlash(c, { kind: 'ok', text: `Policy ${parsed.data.name} saved.` });
    return c.redirect('/updates/policies', 303);
  });

  app.post('/updates/policies/:id/delete', async (c) => {
    const form = await c.req.parseBody();
    const policy = deps.updatePolicies.get(c.req.param('id'));
    if (form.confirm !== 'yes') setFlash(c, { kind: 'error', text: 'Nothing deleted: tick the box to confirm.' });
    else {
      deps.updatePolicies.remove(policy.id);
      setFlash(c, { kind: 'ok', text: `Policy ${policy.name} deleted.` });
    }
    return c.redirect('/updates/policies', 303);
  });
  return app;
}
