import { z } from 'zod';

/**
 * A table's schema as data, so no SQL a site wrote ever reaches a dump or a restore: the
 * site's `SHOW CREATE TABLE` is parsed by a strict grammar (what MariaDB and MySQL print for
 * WordPress and plugin tables) and CREATE TABLE is written again from the parts, every
 * identifier quoted and every keyword from a fixed list. The connector's restore builds the
 * same statement from the same data (class-sitewarden-connector-restore-database.php).
 */

/** Any name MariaDB/MySQL accept for a table or column: 1–64 characters of Unicode, no NUL, none past U+FFFF, no trailing white space. */
export function isLegalIdentifier(name: string): boolean {
  if (name.length === 0 || name.includes('\0') || /[ \t\n\v\f\r]$/.test(name)) return false;
  let characters = 0;
  for (const character of name) {
    const code = character.codePointAt(0)!;
    // Past U+FFFF, and lone surrogates (no UTF-8 for them).
    if (code > 0xffff || (code >= 0xd800 && code <= 0xdfff)) return false;
    characters++;
  }
  return characters <= 64;
}

export const quoteIdentifier = (name: string) => `\`${name.replaceAll('`', '``')}\``;
/** Backslashes are escaped too: a dump and WordPress both run with backslash escapes on (no NO_BACKSLASH_ESCAPES). */
const quoteString = (text: string) =>
  `'${text.replaceAll('\\', '\\\\').replaceAll("'", "''").replaceAll('\0', '\\0')}'`;

const TYPES = [
  'tinyint',
  'smallint',
  'mediumint',
  'int',
  'integer',
  'bigint',
  'decimal',
  'numeric',
  'float',
  'double',
  'real',
  'bit',
  'bool',
  'boolean',
  'char',
  'varchar',
  'binary',
  'varbinary',
  'tinytext',
  'text',
  'mediumtext',
  'longtext',
  'tinyblob',
  'blob',
  'mediumblob',
  'longblob',
  'enum',
  'set',
  'date',
  'time',
  'datetime',
  'timestamp',
  'year',
  'json',
  'uuid',
  'inet4',
  'inet6',
  'geometry',
  'point',
  'linestring',
  'polygon',
  'multipoint',
  'multilinestring',
  'multipolygon',
  'geometrycollection',
] as const;
const ENGINES = ['InnoDB', 'MyISAM', 'Aria', 'MEMORY', 'ARCHIVE', 'CSV', 'BLACKHOLE'] as const;
const ROW_FORMATS = ['DEFAULT', 'DYNAMIC', 'FIXED', 'COMPRESSED', 'REDUNDANT', 'COMPACT', 'PAGE'] as const;
/** Table options whose value is a number (or DEFAULT): harmless storage hints. Directories, CONNECTION, UNION, partitions are not among them. */
export const NUMERIC_OPTIONS = [
  'AUTO_INCREMENT',
  'AVG_ROW_LENGTH',
  'CHECKSUM',
  'DELAY_KEY_WRITE',
  'KEY_BLOCK_SIZE',
  'MAX_ROWS',
  'MIN_ROWS',
  'PACK_KEYS',
  'PAGE_CHECKSUM',
  'PAGE_COMPRESSED',
  'PAGE_COMPRESSION_LEVEL',
  'STATS_AUTO_RECALC',
  'STATS_PERSISTENT',
  'STATS_SAMPLE_PAGES',
  'TRANSACTIONAL',
] as const;
const ACTIONS = ['RESTRICT', 'CASCADE', 'SET NULL', 'NO ACTION', 'SET DEFAULT'] as const;
const NUMBER = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

const identifier = z.string().refine(isLegalIdentifier, 'not a legal identifier');
const charsetName = z.string().regex(/^[A-Za-z0-9_]{1,64}$/);
const count = z
  .number()
  .int()
  .min(0)
  .max(2 ** 32);

const DefaultValue = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('null') }),
  z.object({ kind: z.literal('string'), value: z.string() }),
  z.object({ kind: z.literal('number'), value: z.string().regex(NUMBER) }),
  z.object({ kind: z.literal('bits'), value: z.string().regex(/^[01]{0,64}$/) }),
  z.object({ kind: z.literal('now'), precision: z.number().int().min(0).max(6).nullable() }),
]);

const Column = z.object({
  name: identifier,
  type: z.object({
    name: z.enum(TYPES),
    args: z.array(count).max(2).optional(),
    /** enum and set members. */
    values: z.array(z.string()).max(65535).optional(),
    unsigned: z.boolean().optional(),
    zerofill: z.boolean().optional(),
  }),
  charset: charsetName.optional(),
  collation: charsetName.optional(),
  nullable: z.boolean(),
  default: DefaultValue.optional(),
  onUpdateNow: z.number().int().min(0).max(6).nullable().optional(),
  autoIncrement: z.boolean().optional(),
  comment: z.string().optional(),
  /** MariaDB's JSON columns: `CHECK (json_valid(<the column>))`, the one CHECK a dump carries. */
  jsonValid: z.boolean().optional(),
});

const Index = z.object({
  kind: z.enum(['primary', 'unique', 'key', 'fulltext', 'spatial']),
  name: identifier.optional(),
  columns: z.array(z.object({ name: identifier, length: count.optional(), descending: z.boolean().optional() })).min(1),
  using: z.enum(['BTREE', 'HASH', 'RTREE']).optional(),
  comment: z.string().optional(),
});

const ForeignKey = z.object({
  name: identifier.optional(),
  columns: z.array(identifier).min(1),
  table: identifier,
  references: z.array(identifier).min(1),
  onDelete: z.enum(ACTIONS).optional(),
  onUpdate: z.enum(ACTIONS).optional(),
});

export const TableSchema = z.object({
  columns: z.array(Column).min(1),
  indexes: z.array(Index),
  foreignKeys: z.array(ForeignKey),
  engine: z.enum(ENGINES).optional(),
  charset: charsetName.optional(),
  collation: charsetName.optional(),
  rowFormat: z.enum(ROW_FORMATS).optional(),
  comment: z.string().optional(),
  options: z.array(z.tuple([z.enum(NUMERIC_OPTIONS), z.string().regex(/^(\d{1,20}|DEFAULT)$/)])),
});

export type TableSchema = z.infer<typeof TableSchema>;
type ColumnSchema = z.infer<typeof Column>;

/** The CREATE TABLE statement for `schema`, written by us (no trailing semicolon). */
export function emitCreateTable(name: string, input: TableSchema): string {
  const schema = TableSchema.parse(input);
  if (!isLegalIdentifier(name)) throw new Error('the table name is not a legal identifier');
  const lines = schema.columns.map(emitColumn);
  for (const index of schema.indexes) {
    const head = {
      primary: 'PRIMARY KEY',
      unique: 'UNIQUE KEY',
      key: 'KEY',
      fulltext: 'FULLTEXT KEY',
      spatial: 'SPATIAL KEY',
    }[index.kind];
    const parts = index.columns.map(
      (part) =>
        `${quoteIdentifier(part.name)}${part.length !== undefined ? `(${part.length})` : ''}${part.descending ? ' DESC' : ''}`,
    );
    lines.push(
      `${head}${index.kind !== 'primary' && index.name !== undefined ? ` ${quoteIdentifier(index.name)}` : ''} (${parts.join(',')})${index.using ? ` USING ${index.using}` : ''}${index.comment !== undefined ? ` COMMENT ${quoteString(index.comment)}` : ''}`,
    );
  }
  for (const key of schema.foreignKeys) {
    lines.push(
      `${key.name !== undefined ? `CONSTRAINT ${quoteIdentifier(key.name)} ` : ''}FOREIGN KEY (${key.columns.map(quoteIdentifier).join(',')}) REFERENCES ${quoteIdentifier(key.table)} (${key.references.map(quoteIdentifier).join(',')})${key.onDelete ? ` ON DELETE ${key.onDelete}` : ''}${key.onUpdate ? ` ON UPDATE ${key.onUpdate}` : ''}`,
    );
  }
  const options: string[] = [];
  if (schema.engine) options.push(`ENGINE=${schema.engine}`);
  for (const [option, value] of schema.options) options.push(`${option}=${value}`);
  if (schema.charset) options.push(`DEFAULT CHARSET=${schema.charset}`);
  if (schema.collation) options.push(`COLLATE=${schema.collation}`);
  if (schema.rowFormat) options.push(`ROW_FORMAT=${schema.rowFormat}`);
  if (schema.comment !== undefined) options.push(`COMMENT=${quoteString(schema.comment)}`);
  return `CREATE TABLE ${quoteIdentifier(name)} (\n  ${lines.join(',\n  ')}\n)${options.length ? ` ${options.join(' ')}` : ''}`;
}

function emitColumn(column: ColumnSchema): string {
  const { type } = column;
  let text = `${quoteIdentifier(column.name)} ${type.name}`;
  if (type.values) text += `(${type.values.map(quoteString).join(',')})`;
  else if (type.args?.length) text += `(${type.args.join(',')})`;
  if (type.unsigned) text += ' unsigned';
  if (type.zerofill) text += ' zerofill';
  if (column.charset) text += ` CHARACTER SET ${column.charset}`;
  if (column.collation) text += ` COLLATE ${column.collation}`;
  text += column.nullable ? ' NULL' : ' NOT NULL';
  const value = column.default;
  if (value) {
    if (value.kind === 'null') text += ' DEFAULT NULL';
    else if (value.kind === 'string') text += ` DEFAULT ${quoteString(value.value)}`;
    else if (value.kind === 'number') text += ` DEFAULT ${value.value}`;
    else if (value.kind === 'bits') text += ` DEFAULT b'${value.value}'`;
    else text += ` DEFAULT current_timestamp(${value.precision ?? ''})`;
  }
  if (column.onUpdateNow !== undefined) text += ` ON UPDATE current_timestamp(${column.onUpdateNow ?? ''})`;
  if (column.autoIncrement) text += ' AUTO_INCREMENT';
  if (column.comment !== undefined) text += ` COMMENT ${quoteString(column.comment)}`;
  if (column.jsonValid) text += ` CHECK (json_valid(${quoteIdentifier(column.name)}))`;
  return text;
}
