// The baselines for bench/api.ts, on @hono/node-server like the daemon, nothing else:
//   /            a constant JSON answer: the floor of one request through Hono;
//   /sites       the same page of sites read from the same database file, as plain rows;
//   /sites/:id   the same site and its inventory.
// The last two do the same reading and JSON work as the daemon's routes without its stack
// (authentication, validation, views, metrics), so the ratio to them is what the stack costs.
import process from 'node:process';
import { serve } from '@hono/node-server';
import Database from 'better-sqlite3';
import { Hono } from 'hono';

const db = new Database(process.argv[3], { readonly: true });
const page = db.prepare('select * from sites order by id limit ?');
const site = db.prepare('select * from sites where id = ?');
const inventory = db.prepare('select * from site_inventories where site_id = ?');

const app = new Hono();
app.get('/', (c) => c.json({ status: 'ok' }));
app.get('/sites', (c) => {
  const rows = page.all(51);
  return c.json({ items: rows.slice(0, 50), nextCursor: rows.length > 50 ? rows[49].id : null });
});
app.get('/sites/:id', (c) => {
  const row = site.get(c.req.param('id'));
  if (!row) return c.json({ status: 404 }, 404);
  const held = inventory.get(row.id);
  return c.json({ ...row, plugins: JSON.parse(held.plugins_json), themes: JSON.parse(held.themes_json) });
});
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: Number(process.argv[2]) });
