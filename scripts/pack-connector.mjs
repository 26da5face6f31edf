#!/usr/bin/env node
/**
 * Packs connector/ into a zip WordPress can install from Plugins → Add New → Upload:
 * a single top-level folder, sitewarden-connector/.
 *
 *   node scripts/pack-connector.mjs [outPath]   (default: dist/sitewarden-connector.zip)
 *
 * Node built-ins only. The archive is deterministic: entries sorted, fixed timestamps
 * and permissions, so the same sources always give the same bytes.
 */
import { Buffer } from 'node:buffer';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import process from 'node:process';
import { crc32, deflateRawSync } from 'node:zlib';

const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TOP_FOLDER = 'sitewarden-connector';

// 2024-01-01 00:00:00 in MS-DOS format (zip has no time zone; any fixed value will do).
const DOS_TIME = 0;
const DOS_DATE = ((2024 - 1980) << 9) | (1 << 5) | 1;
const FILE_MODE = 0o100644;
const DIR_MODE = 0o40755;
const MADE_BY_UNIX = (3 << 8) | 20;
const VERSION_NEEDED = 20;

/** @returns {{ files: number, bytes: number, outPath: string }} */
export function packConnector({
  sourceDir = join(PROJECT_ROOT, 'connector'),
  outPath = join(PROJECT_ROOT, 'dist/sitewarden-connector.zip'),
} = {}) {
  const entries = collect(sourceDir).map(({ path, isDirectory }) => ({
    name: [TOP_FOLDER, ...relative(sourceDir, path).split(sep).filter(Boolean)].join('/') + (isDirectory ? '/' : ''),
    data: isDirectory ? null : readFileSync(path),
  }));
  const zip = buildZip(entries);
  mkdirSync(dirname(outPath), { recursive: true });
  writeFileSync(outPath, zip);
  return { files: entries.filter((entry) => entry.data).length, bytes: zip.length, outPath };
}

/** The source folder and everything in it, depth first, names sorted; dotfiles are not part of the plugin. */
function collect(dir) {
  const found = [{ path: dir, isDirectory: true }];
  const children = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith('.'))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const child of children) {
    const path = join(dir, child.name);
    if (child.isDirectory()) found.push(...collect(path));
    else if (child.isFile()) found.push({ path, isDirectory: false });
  }
  return found;
}

function buildZip(entries) {
  const chunks = [];
  const central = [];
  let offset = 0;

  for (const { name, data } of entries) {
    const nameBytes = Buffer.from(name, 'utf8');
    const isDirectory = data === null;
    const raw = data ?? Buffer.alloc(0);
    const deflated = isDirectory ? raw : deflateRawSync(raw, { level: 9 });
    // Store instead when deflating does not help (tiny files).
    const method = !isDirectory && deflated.length < raw.length ? 8 : 0;
    const body = method === 8 ? deflated : raw;
    const checksum = crc32(raw);

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(VERSION_NEEDED, 4);
    local.writeUInt16LE(0x0800, 6); // Names are UTF-8.
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(checksum, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(raw.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    local.writeUInt16LE(0, 28);

    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE(MADE_BY_UNIX, 4);
    header.writeUInt16LE(VERSION_NEEDED, 6);
    header.writeUInt16LE(0x0800, 8);
    header.writeUInt16LE(method, 10);
    header.writeUInt16LE(DOS_TIME, 12);
    header.writeUInt16LE(DOS_DATE, 14);
    header.writeUInt32LE(checksum, 16);
    header.writeUInt32LE(body.length, 20);
    header.writeUInt32LE(raw.length, 24);
    header.writeUInt16LE(nameBytes.length, 28);
    header.writeUInt16LE(0, 30); // Extra field length.
    header.writeUInt16LE(0, 32); // Comment length.
    header.writeUInt16LE(0, 34); // Disk number.
    header.writeUInt16LE(0, 36); // Internal attributes.
    // Unix mode in the high half; 0x10 is the MS-DOS directory flag.
    header.writeUInt32LE((((isDirectory ? DIR_MODE : FILE_MODE) << 16) | (isDirectory ? 0x10 : 0)) >>> 0, 38);
    header.writeUInt32LE(offset, 42);

    chunks.push(local, nameBytes, body);
    central.push(header, nameBytes);
    offset += local.length + nameBytes.length + body.length;
  }

  const centralDirectory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(0, 4); // This disk.
  end.writeUInt16LE(0, 6); // Disk with the central directory.
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralDirectory.length, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(0, 20); // Comment length.

  return Buffer.concat([...chunks, centralDirectory, end]);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const outPath = process.argv[2] ? resolve(process.argv[2]) : undefined;
  const { files, bytes, outPath: written } = packConnector(outPath ? { outPath } : {});
  process.stdout.write(`${written}: ${files} files, ${bytes} bytes\n`);
}
