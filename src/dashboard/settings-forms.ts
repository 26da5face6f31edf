import { html } from 'hono/html';
import type { Role } from '../shared/actor.js';
import type { SignedInSession } from '../users/index.js';
import { csrfField, type Html } from './layout.js';

/** What the settings pages share: reading their forms, a role's options, a one-button form. */

export type Form = Record<string, unknown>;

/** A field of the form as trimmed text; empty when it is missing or not text. */
export const text = (form: Form, name: string) => (typeof form[name] === 'string' ? (form[name] as string).trim() : '');

export const roleOptions = (choices: readonly Role[], selected: Role) =>
  choices.map((role) => html`<option value="${role}" ${role === selected ? 'selected' : ''}>${role}</option>`);

/** A form of one button posting to `path` (with the CSRF field and any `extra` fields). */
export const postButton = (
  session: SignedInSession,
  path: string,
  label: string,
  extra: Html | string = '',
  kind = 'secondary',
) =>
  html`<form method="post" action="${path}">
    ${csrfField(session)}${extra}<button type="submit" class="${kind}">${label}</button>
  </form>`;
