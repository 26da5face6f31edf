import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { SignedInSession } from '../users/index.js';
import { STYLESHEET } from './stylesheet.js';
import { roleAtLeast } from '../shared/actor.js';

/** The form field a dashboard form carries its session's CSRF token in (session.ts checks it). */
export const CSRF_FIELD = '_csrf';

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

const NAV = [
  { href: '/', label: 'Overview' },
  { href: '/activity', label: 'Activity' },
  { href: '/updates', label: 'Updates' },
  { href: '/backups', label: 'Backups' },
  { href: '/settings', label: 'Settings' },
  { href: '/settings/audit', label: 'Audit log', role: 'owner' },
] as const satisfies readonly { href: string; label: string; role?: 'owner' }[];

/** A table's head: one column header per label (an empty label: a checkbox column, named for screen readers). */
export const columns = (...labels: string[]) =>
  html`<thead>
    <tr>
      ${labels.map((label) =>
        label === ''
          ? html`<th scope="col"><span class="visually-hidden">Select</span></th>`
          : html`<th scope="col">${label}</th>`,
      )}
    </tr>
  </thead>`;

/** A GET form that narrows a page to the sites carrying one tag (`tag`), with each tag's count. */
export const tagFilterForm = (action: string, tag: string | undefined, tags: { tag: string; sites: number }[]) =>
  html`<form class="filters" method="get" action="${action}">
    <div>
      <label for="tag">Tag</label>
      <select id="tag" name="tag">
        <option value="">any</option>
        ${tags.map((t) => html`<option value="${t.tag}" ${tag === t.tag ? 'selected' : ''}>${t.tag} (${t.sites})</option>`)}
      </select>
    </div>
    <button type="submit">Filter</button>
  </form>`;

/** The hidden field every state-changing form carries. */
export const csrfField = (session: SignedInSession) =>
  html`<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}" />`;

/** A one-button form posting to a site action, for a manager or owner; `confirm` adds a required checkbox (restore, delete). */
export function action(
  session: SignedInSession,
  path: string,
  label: string,
  options: { danger?: boolean; confirm?: string; describedBy?: string } = {},
) {
  // Site work is a manager's (http/permissions.ts): a viewer is not offered the button.
  if (!roleAtLeast(session.user.role, 'manager')) return '';
  return html`<form method="post" action="${path}">
    ${csrfField(session)}
    ${
      options.confirm
        ? html`<label class="check"
            ><input type="checkbox" name="confirm" value="yes" required /> ${options.confirm}</label
          >`
        : ''
    }
    <button type="submit" class="${options.danger ? 'danger' : 'secondary'}">${label}</button>
  </form>`;
}

function head(title: string, scripts: string[]) {
  return html`<head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="color-scheme" content="light dark" />
    <title>${title} · Sitewarden</title>
    ${raw(`<style>${STYLESHEET}</style>`)}
    <link rel="icon" href="/assets/favicon.svg" type="image/svg+xml" />
    ${scripts.map((src) => html`<script src="${src}" defer></script>`)}
  </head>`;
}

/** A signed-in page: header with navigation and sign-out, then `body` in <main>. */
export function page({
  title,
  session,
  current,
  body,
  scripts = [],
  flash,
}: {
  title: string;
  session: SignedInSession;
  current: string;
  body: Html;
  scripts?: string[];
  flash?: { kind: 'ok' | 'error'; text: string } | null;
}): Html {
  return html`<!doctype html>
    <html lang="en">
      ${head(title, scripts)}
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header class="top">
          <a class="brand" href="/">Sitewarden</a>
          <nav aria-label="Main">
            <ul>
              ${NAV.filter((item) => !('role' in item) || roleAtLeast(session.user.role, item.role)).map(
                (item) =>
                  html`<li>
                    <a href="${item.href}" ${raw(item.href === current ? 'aria-current="page"' : '')}>${item.label}</a>
                  </li>`,
              )}
            </ul>
          </nav>
          <form class="signout" method="post" action="/sign-out">
            ${csrfField(session)}
            <span class="who">${session.user.username}</span>
            <button type="submit">Sign out</button>
          </form>
        </header>
        <main id="main" data-csrf="${session.csrfToken}">
          ${
            flash
              ? html`<p class="flash ${flash.kind}" role="${flash.kind === 'error' ? 'alert' : 'status'}">
                  ${flash.text}
                </p>`
              : ''
          }
          ${body}
        </main>
      </body>
    </html>`;
}

/** A page for someone not signed in (the sign-in form). */
export function publicPage(title: string, body: Html): Html {
  return html`<!doctype html>
    <html lang="en">
      ${head(title, [])}
      <body class="public">
        <main id="main">${body}</main>
      </body>
    </html>`;
}
