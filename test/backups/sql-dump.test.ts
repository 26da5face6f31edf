import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/backups/manifest.js';
import type { ObjectStore } from '../../src/backups/object-store.js';
import { batchHeader, countBatchRows, writeSqlDump } from '../../src/backups/sql-dump.js';
import { parseCreateTable } from '../../src/backups/sql-schema-parser.js';
import { emitCreateTable, isLegalIdentifier, quoteIdentifier, type TableSchema } from '../../src/backups/sql-schema.js';
import { dumpStatementKinds } from '../support/sql-statements.js';

/**
 * The dump is written by the daemon: a site's CREATE TABLE is parsed by a strict grammar and
 * written again, its row batches are checked literal by literal. What a hostile site smuggles
 * into either never reaches database.sql.
 */

// As MariaDB 10.11 prints them (SHOW CREATE TABLE), a WordPress core table and a WooCommerce-style one.
const POSTS = `CREATE TABLE \`wp_posts\` (
  \`ID\` bigint(20) unsigned NOT NULL AUTO_INCREMENT,
  \`post_author\` bigint(20) unsigned NOT NULL DEFAULT 0,
  \`post_date\` datetime NOT NULL DEFAULT '0000-00-00 00:00:00',
  \`post_content\` longtext NOT NULL,
  \`post_name\` varchar(200) NOT NULL DEFAULT '',
  PRIMARY KEY (\`ID\`),
  KEY \`post_name\` (\`post_name\`(191)),
  KEY \`type_status_date\` (\`post_name\`,\`post_date\`,\`ID\`)
) ENGINE=InnoDB AUTO_INCREMENT=6 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_520_ci`;

const ORDERS = `CREATE TABLE \`wp_wc_orders\` (
  \`id\` bigint(20) unsigned NOT NULL,
  \`status\` enum('wc-pending','it''s','back\\\\slash') NOT NULL DEFAULT 'wc-pending',
  \`flags\` set('a','b') DEFAULT NULL,
  \`total_amount\` decimal(26,8) DEFAULT -1.50000000 COMMENT 'a ''comment''; DROP DATABASE x',
  \`date_updated_gmt\` timestamp NOT NULL DEFAULT current_timestamp() ON UPDATE current_timestamp(),
  \`date_paid\` datetime(6) DEFAULT current_timestamp(6),
  \`meta\` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL CHECK (json_valid(\`meta\`)),
  \`bits\` bit(3) DEFAULT b'101',
  \`legacy\` varchar(10) CHARACTER SET latin1 COLLATE latin1_german1_ci DEFAULT NULL,
  \`customer_note\` text DEFAULT NULL,
  \`parent_order_id\` bigint(20) unsigned DEFAULT NULL,
  PRIMARY KEY (\`id\`),
  UNIQUE KEY \`status_flags\` (\`status\`,\`flags\`),
  KEY \`total\` (\`total_amount\` DESC) USING BTREE COMMENT 'idx',
  FULLTEXT KEY \`note\` (\`customer_note\`),
  CONSTRAINT \`parent\` FOREIGN KEY (\`parent_order_id\`) REFERENCES \`wp_wc_orders\` (\`id\`) ON DELETE CASCADE ON UPDATE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci ROW_FORMAT=DYNAMIC COMMENT='orders'`;

describe('parsing a site’s CREATE TABLE and writing it again', () => {
  it('keeps everything real WordPress and plugin tables use, written the way MariaDB prints it', () => {
    const posts = parseCreateTable(POSTS, 'wp_posts');
    expect(posts.columns.map((column) => column.name)).toEqual([
      'ID',
      'post_author',
      'post_date',
      'post_content',
      'post_name',
    ]);
    expect(posts.indexes).toContainEqual({
      kind: 'key',
      name: 'post_name',
      columns: [{ name: 'post_name', length: 191 }],
    });
    expect(emitCreateTable('wp_posts', posts)).toBe(POSTS);

    const orders = parseCreateTable(ORDERS, 'wp_wc_orders');
    expect(orders.columns[1]!.type).toEqual({ name: 'enum', values: ['wc-pending', "it's", 'back\\slash'] });
    expect(orders.columns[3]!.comment).toBe("a 'comment'; DROP DATABASE x");
    expect(orders.columns[4]).toMatchObject({ default: { kind: 'now', precision: null }, onUpdateNow: null });
    expect(orders.columns[6]).toMatchObject({ charset: 'utf8mb4', collation: 'utf8mb4_bin', jsonValid: true });
    expect(orders.foreignKeys).toEqual([
      {
        name: 'parent',
        columns: ['parent_order_id'],
        table: 'wp_wc_orders',
        references: ['id'],
        onDelete: 'CASCADE',
        onUpdate: 'SET NULL',
      },
    ]);
    // Written again it parses to the same schema: nothing is lost on the way through a dump.
    expect(parseCreateTable(emitCreateTable('wp_wc_orders', orders), 'wp_wc_orders')).toEqual(orders);
  });

  it('quotes every name, so backticks, spaces and UTF-8 round-trip', () => {
    const name = 'wp_we`ird tåble ✓';
    const create = `CREATE TABLE ${quoteIdentifier(name)} (\n  ${quoteIdentifier('col `` x')} int(11) NOT NULL\n) ENGINE=InnoDB`;
    const schema = parseCreateTable(create, name);
    expect(schema.columns[0]!.name).toBe('col `` x');
    expect(emitCreateTable(name, schema)).toBe(
      'CREATE TABLE `wp_we``ird tåble ✓` (\n  `col ```` x` int(11) NOT NULL\n) ENGINE=InnoDB',
    );
  });

  const hostile: [string, string][] = [
    ['a second statement after the table', `${POSTS}; DROP DATABASE wordpress`],
    ['a statement after a column', 'CREATE TABLE `t` (`a` int); GRANT ALL ON *.* TO evil'],
    [
      'an executable comment in a default',
      'CREATE TABLE `t` (`a` int DEFAULT 1 /*!50000 , b int) ; CREATE USER evil */)',
    ],
    ['a line comment', 'CREATE TABLE `t` (`a` int -- x\n)'],
    ['a hash comment', 'CREATE TABLE `t` (`a` int # x\n)'],
    ['an expression default', 'CREATE TABLE `t` (`a` int DEFAULT (1 + (SELECT 1)))'],
    ['a generated column', 'CREATE TABLE `t` (`a` int, `b` int GENERATED ALWAYS AS (`a` + 1) VIRTUAL)'],
    ['a CHECK other than json_valid', 'CREATE TABLE `t` (`a` int CHECK (`a` > 0))'],
    ['a federated engine', "CREATE TABLE `t` (`a` int) ENGINE=FEDERATED CONNECTION='mysql://u@evil/db/t'"],
    ['a data directory', "CREATE TABLE `t` (`a` int) ENGINE=InnoDB DATA DIRECTORY='/etc'"],
    ['a MERGE union', 'CREATE TABLE `t` (`a` int) ENGINE=MRG_MyISAM UNION=(`wp_users`)'],
    ['partitions', 'CREATE TABLE `t` (`a` int) ENGINE=InnoDB PARTITION BY HASH (`a`)'],
    ['CREATE ... SELECT', 'CREATE TABLE `t` (`a` int) SELECT user_pass FROM wp_users'],
    ['a double-quoted name', 'CREATE TABLE "t" (`a` int)'],
    ['a name in another database', 'CREATE TABLE `t` (`a` int, FOREIGN KEY (`a`) REFERENCES `mysql`.`user` (`a`))'],
    ['another table than listed', 'CREATE TABLE `wp_users` (`a` int)'],
    ['an unclosed string', "CREATE TABLE `t` (`a` int COMMENT 'x)"],
  ];
  it.each(hostile)('refuses %s', (_, create) => {
    expect(() => parseCreateTable(create, create.startsWith('CREATE TABLE `wp_posts`') ? 'wp_posts' : 't')).toThrow();
  });

  it('keeps SQL smuggled into a comment or string default a string, quoted again by the daemon', () => {
    const create =
      "CREATE TABLE `t` (`a` varchar(9) DEFAULT 'x''); GRANT ALL ON *.* TO evil; -- ' COMMENT 'CREATE USER evil'\n) ENGINE=InnoDB";
    const emitted = emitCreateTable('t', parseCreateTable(create, 't'));
    expect(emitted).toBe(
      "CREATE TABLE `t` (\n  `a` varchar(9) NULL DEFAULT 'x''); GRANT ALL ON *.* TO evil; -- ' COMMENT 'CREATE USER evil'\n) ENGINE=InnoDB",
    );
    expect(dumpStatementKinds(`${emitted};\n`)).toEqual(['CREATE TABLE']);
  });

  it('round-trips generated legal names, comments, defaults and enum members through emit and parse', () => {
    const name = fc.string({ unit: 'binary', minLength: 1, maxLength: 64 }).filter(isLegalIdentifier);
    const text = fc.string({ unit: 'binary', maxLength: 40 }).filter((value) => isLegalIdentifier(`x${value}x`));
    fc.assert(
      fc.property(
        name,
        fc.uniqueArray(name, { minLength: 1, maxLength: 4 }),
        text,
        fc.array(text, { minLength: 1, maxLength: 4 }),
        (table, columns, comment, members) => {
          const schema: TableSchema = {
            columns: columns.map((column, index) => ({
              name: column,
              type: index === 0 ? { name: 'enum', values: members } : { name: 'varchar', args: [50] },
              nullable: index !== 0,
              ...(index === 0 ? {} : { default: { kind: 'string' as const, value: comment } }),
              comment,
            })),
            indexes: [{ kind: 'key', name: columns[0]!, columns: [{ name: columns[0]! }] }],
            foreignKeys: [],
            engine: 'InnoDB',
            comment,
            options: [],
          };
          const emitted = emitCreateTable(table, schema);
          expect(parseCreateTable(emitted, table)).toEqual(schema);
          expect(dumpStatementKinds(`${emitted};\n`)).toEqual(['CREATE TABLE']);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('a batch of rows', () => {
  const columns = ['id', 'data'];
  const header = batchHeader('wp_t', columns);

  it('is counted when it is one INSERT of NULL, number and X’hex’ literals', () => {
    expect(countBatchRows(`${header}(1,X'00ff'),\n(-2.5e+3,NULL),\n(3,X'');\n`, 'wp_t', columns)).toBe(3);
  });

  it.each([
    ['a second statement', `${header}(1,NULL);\nDROP DATABASE wordpress;\n`],
    ['a statement hidden after a row', `${header}(1,NULL),\n(2,NULL); GRANT ALL ON *.* TO evil;\n`],
    ['a quoted string literal', `${header}(1,'x');\n`],
    ['a function call', `${header}(1,LOAD_FILE('/etc/passwd'));\n`],
    ['a subquery', `${header}(1,(SELECT user_pass FROM wp_users LIMIT 1));\n`],
    ['a row with a missing value', `${header}(1);\n`],
    ['a row with an extra value', `${header}(1,NULL,NULL);\n`],
    ['another table', `${batchHeader('wp_users', columns)}(1,NULL);\n`],
    ['other columns', `${batchHeader('wp_t', ['id', 'user_pass'])}(1,NULL);\n`],
    ['a comment', `${header}(1,NULL) /* x */;\n`],
    ['no end', `${header}(1,NULL),\n`],
  ])('is refused with %s', (_, sql) => {
    expect(() => countBatchRows(sql, 'wp_t', columns)).toThrow();
  });

  it('counts generated batches exactly', () => {
    const literal = fc.oneof(
      fc.constant('NULL'),
      fc.integer().map(String),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => value.toExponential()),
      fc.uint8Array({ maxLength: 20 }).map((bytes) => `X'${Buffer.from(bytes).toString('hex')}'`),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(literal, literal), { minLength: 1, maxLength: 30 }), (rows) => {
        const sql = `${header}${rows.map((row) => `(${row.join(',')})`).join(',\n')};\n`;
        expect(countBatchRows(sql, 'wp_t', columns)).toBe(rows.length);
      }),
      { numRuns: 200 },
    );
  });
});

describe('the dump of a backup taken before the daemon wrote its own', () => {
  function memoryStore(objects: Buffer[]): { store: ObjectStore; hashes: string[] } {
    const byHash = new Map(objects.map((content) => [createHash('sha256').update(content).digest('hex'), content]));
    return {
      store: { read: async (hash: string) => byHash.get(hash)! } as unknown as ObjectStore,
      hashes: [...byHash.keys()],
    };
  }
  const manifest = (create: string, batches: string[]): Manifest => ({
    format: 1,
    siteUrl: 'http://example.test/\nDROP DATABASE x; -- ',
    createdAt: '2026-01-01T00:00:00.000Z',
    files: [],
    tables: [{ name: 'wp_posts', create, rows: 1, primaryKey: ['ID'], checksum: null, batches }],
  });
  const dump = async (m: Manifest, store: ObjectStore) => {
    let text = '';
    await writeSqlDump({ manifest: m, store, write: async (chunk) => void (text += chunk.toString()) });
    return text;
  };

  it('writes the site’s CREATE TABLE again from its parsed schema, with only the statements a dump needs', async () => {
    const { store, hashes } = memoryStore([
      Buffer.from(
        `${batchHeader('wp_posts', ['ID', 'post_author', 'post_date', 'post_content', 'post_name'])}(1,0,X'',X'',X'');\n`,
      ),
    ]);
    const text = await dump(manifest(POSTS, hashes), store);
    expect(dumpStatementKinds(text)).toEqual([
      'SET',
      'SET',
      'SET',
      'DROP TABLE IF EXISTS',
      'CREATE TABLE',
      'INSERT',
      'SET',
    ]);
    expect(text).not.toContain('\nDROP DATABASE');
  });

  it('refuses a CREATE TABLE carrying another statement, naming the table (backup-table-unsafe)', async () => {
    const { store } = memoryStore([]);
    await expect(dump(manifest(`${POSTS};\nDROP DATABASE wordpress`, []), store)).rejects.toMatchObject({
      problem: { name: 'backup-table-unsafe', status: 422 },
      extensions: { table: 'wp_posts' },
    });
  });

  it('refuses a stored batch that is not plain INSERT rows, naming the table', async () => {
    const { store, hashes } = memoryStore([
      Buffer.from("INSERT INTO `wp_posts` (`ID`) VALUES (1); GRANT ALL ON *.* TO 'evil';\n"),
    ]);
    await expect(dump(manifest(POSTS, hashes), store)).rejects.toMatchObject({
      problem: { name: 'backup-table-unsafe' },
      extensions: { table: 'wp_posts' },
    });
  });
});
