import { Hono } from 'hono';
import { isAppError } from '../shared/errors.js';
import { setFlash, type DashboardEnv } from './session.js';

export interface SiteActionsDeps {
  connectSite(input: {
    url: string;
    username?: string;
    applicationPassword?: string;
  }): Promise<
    { mode: 'authorization'; siteId: string; authorizeUrl: string } | { mode: 'credentials'; siteId: string }
  >;
}

const field = (form: Record<string, unknown>, name: string) => {
  const value = form[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
};

/** Form posts that change a site; each answers with a redirect (post/redirect/get) and a flash in the query. */
export function createSiteActions(deps: SiteActionsDeps) {
  const app = new Hono<DashboardEnv>();
  app.post('/sites/connect', async (c) => {
    const form = await c.req.parseBody();
    try {
      const result = await deps.connectSite({
        url: field(form, 'url') ?? '',
        username: field(form, 'username'),
        applicationPassword: field(form, 'applicationPassword'),
      });
      if (result.mode === 'authorization') return c.redirect(result.authorizeUrl, 303);
      setFlash(c, { kind: 'ok', text: 'Site connected.' });
      return c.redirect(`/sites/${result.siteId}`, 303);
    } catch (error) {
      if (!isAppError(error)) throw error;
      setFlash(c, { kind: 'error', text: `Could not connect the site: ${error.detail}` });
      return c.redirect('/', 303);
    }
  });
  return app;
}
