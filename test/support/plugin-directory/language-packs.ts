import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from '../processes.js';

/** One language pack as api.wordpress.org lists it in an update check's `translations`. */
export interface LanguagePack {
  type: 'plugin';
  slug: string;
  language: string;
  version: string;
  /** 'YYYY-MM-DD HH:MM:SS', also the .po's PO-Revision-Date. */
  updated: string;
  strings: Record<string, string>;
  zipPath: string;
}

/** The packs the mirror offers: a German translation of the sitewarden-demo fixture plugin. */
const PACKS: Omit<LanguagePack, 'zipPath'>[] = [
  {
    type: 'plugin',
    slug: 'sitewarden-demo',
    language: 'de_DE',
    version: '1.1.0',
    updated: '2024-05-01 12:00:00',
    strings: { 'Hello from Sitewarden Demo': 'Hallo von Sitewarden Demo' },
  },
];

function poHeaders(pack: { updated: string; language: string }): string {
  return [
    `PO-Revision-Date: ${pack.updated}+0000`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=UTF-8',
    'Content-Transfer-Encoding: 8bit',
    'Plural-Forms: nplurals=2; plural=n != 1;',
    `Language: ${pack.language}`,
    'Project-Id-Version: Sitewarden test language pack',
    '',
  ].join('\n');
}

const poString = (text: string) => `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`;

/** A gettext .po file: the header entry, then one entry per string. */
function renderPo(pack: { updated: string; language: string; strings: Record<string, string> }): string {
  // One header per line, as gettext writes them: WordPress reads PO-Revision-Date from such a line.
  const headerLines = poHeaders(pack)
    .split('\n')
    .filter(Boolean)
    .map((line) => poString(`${line}\n`));
  const entries = [`msgid ""\nmsgstr ""\n${headerLines.join('\n')}\n`];
  for (const [original, translation] of Object.entries(pack.strings)) {
    entries.push(`msgid ${poString(original)}\nmsgstr ${poString(translation)}\n`);
  }
  return entries.join('\n');
}

/** A gettext .mo file (little-endian, no hash table), what WordPress's MO reader loads. */
export function renderMo(pack: { updated: string; language: string; strings: Record<string, string> }): Buffer {
  const entries = [['', poHeaders(pack)] as const, ...Object.entries(pack.strings)].sort(([a], [b]) =>
    Buffer.compare(Buffer.from(a), Buffer.from(b)),
  );
  const count = entries.length;
  const headerSize = 28;
  const tablesEnd = headerSize + count * 16;
  const originals = entries.map(([original]) => Buffer.from(original, 'utf8'));
  const translations = entries.map(([, translation]) => Buffer.from(translation, 'utf8'));
  const header = Buffer.alloc(tablesEnd);
  header.writeUInt32LE(0x950412de, 0);
  header.writeUInt32LE(0, 4);
  header.writeUInt32LE(count, 8);
  header.writeUInt32LE(headerSize, 12);
  header.writeUInt32LE(headerSize + count * 8, 16);
  header.writeUInt32LE(0, 20);
  header.writeUInt32LE(tablesEnd, 24);
  const strings: Buffer[] = [];
  let offset = tablesEnd;
  const place = (table: number, index: number, text: Buffer) => {
    header.writeUInt32LE(text.length, table + index * 8);
    header.writeUInt32LE(offset, table + index * 8 + 4);
    strings.push(text, Buffer.alloc(1));
    offset += text.length + 1;
  };
  originals.forEach((text, index) => place(headerSize, index, text));
  translations.forEach((text, index) => place(headerSize + count * 8, index, text));
  return Buffer.concat([header, ...strings]);
}

/** Zips each pack as translate.wordpress.org does: `<slug>-<locale>.po` and `.mo` at the top level. */
export async function buildLanguagePacks(zipDir: string): Promise<LanguagePack[]> {
  return Promise.all(
    PACKS.map(async (pack) => {
      const name = `${pack.slug}-${pack.language}`;
      const dir = join(zipDir, 'translations', `${pack.type}-${name}-${pack.version}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${name}.po`), renderPo(pack));
      writeFileSync(join(dir, `${name}.mo`), renderMo(pack));
      const zipPath = join(zipDir, `translation-${pack.type}-${name}-${pack.version}.zip`);
      await runCommand('zip', ['-qrXj', zipPath, dir]);
      return { ...pack, zipPath };
    }),
  );
}
