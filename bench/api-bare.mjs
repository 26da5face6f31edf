// The baseline for bench/api.ts: one Hono route on @hono/node-server, nothing else.
import process from 'node:process';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono();
app.get('/', (c) => c.json({ status: 'ok' }));
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: Number(process.argv[2]) });
