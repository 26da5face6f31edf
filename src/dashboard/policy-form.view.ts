import { html } from 'hono/html';
import type { SignedInSession } from '../users/index.js';
import { csrfField } from './layout.js';
import { DAYS, KINDS, type Errors, type Policy, type Values } from './policy-form.values.js';

/** The update-policy form: one form to create or edit a policy, each problem shown beside its field. */

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

export function policyForm(session: SignedInSession, values: Values, errors: Errors, policy: Policy | null) {
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
