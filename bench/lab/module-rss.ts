// The RSS of a process that has only imported one module and what it pulls in:
// node --import tsx bench/lab/module-rss.ts src/uptime/uptime.service.ts
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const file = process.argv[2];
if (!file) throw new Error('usage: node --import tsx bench/lab/module-rss.ts <module>');
await import(pathToFileURL(resolve(file)).href);
console.log(`${file}: rss ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB after import`);
