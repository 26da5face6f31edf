import { isLegalIdentifier, NUMERIC_OPTIONS, TableSchema } from './sql-schema.js';

/**
 * Reads `SHOW CREATE TABLE` output into a TableSchema, or throws naming what it could not
 * accept. Only what MariaDB and MySQL print for ordinary tables is understood; comments
 * (`/*!…*∕`, `--`, `#`), `;`, double-quoted names, expression defaults, generated columns,
 * CHECK constraints other than MariaDB's json_valid, partitions and table options that reach
 * outside the table (DATA DIRECTORY, CONNECTION, UNION, …) are refused.
 */
type Token = { kind: 'ident' | 'string' | 'number' | 'word' | 'bits' | 'punct'; text: string };

const ESCAPES: Record<string, string> = {
  '0': '\0',
  n: '\n',
  r: '\r',
  t: '\t',
  b: '\b',
  Z: '\x1a',
  '%': '\\%',
  _: '\\_',
};

function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  const word = /[A-Za-z_][A-Za-z0-9_$]*/y;
  const number = /-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?/y;
  let at = 0;
  while (at < sql.length) {
    const character = sql[at]!;
    if (/\s/.test(character)) {
      at++;
    } else if (character === '`') {
      let text = '';
      for (at++; ;) {
        const end = sql.indexOf('`', at);
        if (end < 0) throw new Error('an identifier is not closed');
        text += sql.slice(at, end);
        at = end + 1;
        if (sql[at] !== '`') break;
        text += '`';
        at++;
      }
      tokens.push({ kind: 'ident', text });
    } else if (character === "'") {
      tokens.push({ kind: 'string', text: readString(sql, at + 1, (end) => (at = end)) });
    } else if ((character === 'b' || character === 'B') && sql[at + 1] === "'") {
      const end = sql.indexOf("'", at + 2);
      const bits = end < 0 ? '' : sql.slice(at + 2, end);
      if (end < 0 || !/^[01]*$/.test(bits)) throw new Error('a bit literal is malformed');
      tokens.push({ kind: 'bits', text: bits });
      at = end + 1;
    } else if (/[A-Za-z_]/.test(character)) {
      word.lastIndex = at;
      const text = word.exec(sql)![0];
      tokens.push({ kind: 'word', text: text.toUpperCase() });
      at += text.length;
    } else if (/[-\d.]/.test(character) && !sql.startsWith('--', at)) {
      number.lastIndex = at;
      const match = number.exec(sql);
      if (!match) throw new Error(`unexpected ${JSON.stringify(character)}`);
      tokens.push({ kind: 'number', text: match[0] });
      at += match[0].length;
    } else if ('(),='.includes(character)) {
      tokens.push({ kind: 'punct', text: character });
      at++;
    } else {
      throw new Error(`unexpected ${JSON.stringify(sql.slice(at, at + 2))}`);
    }
  }
  return tokens;
}

function readString(sql: string, start: number, setEnd: (end: number) => void): string {
  let text = '';
  for (let at = start; at < sql.length; at++) {
    const character = sql[at]!;
    if (character === '\\') {
      const next = sql[++at];
      if (next === undefined) break;
      text += ESCAPES[next] ?? next;
    } else if (character === "'") {
      if (sql[at + 1] === "'") {
        text += "'";
        at++;
      } else {
        setEnd(at + 1);
        return text;
      }
    } else text += character;
  }
  throw new Error('a string is not closed');
}

export function parseCreateTable(sql: string, expectedName: string): TableSchema {
  const tokens = tokenize(sql);
  let at = 0;
  const peek = (offset = 0) => tokens[at + offset];
  const isWord = (text: string, offset = 0) => peek(offset)?.kind === 'word' && peek(offset)!.text === text;
  const isPunct = (text: string) => peek()?.kind === 'punct' && peek()!.text === text;
  const fail = (what: string): never => {
    const token = peek();
    throw new Error(
      `${what} expected${token ? ` at ${JSON.stringify(token.kind === 'ident' ? `\`${token.text}\`` : token.text)}` : ' at the end'}`,
    );
  };
  const word = (text: string) => (isWord(text) ? (at++, true) : false);
  const expectWord = (...texts: string[]) => texts.forEach((text) => word(text) || fail(text));
  const punct = (text: string) => (isPunct(text) ? (at++, true) : false);
  const expectPunct = (text: string) => punct(text) || fail(`"${text}"`);
  const take = (kind: Token['kind'], what: string) => (peek()?.kind === kind ? tokens[at++]!.text : fail(what));
  const name = () => {
    const text = take('ident', 'a quoted name');
    if (!isLegalIdentifier(text)) fail('a legal name');
    return text;
  };
  const integer = () => {
    const text = take('number', 'a number');
    if (!/^\d{1,10}$/.test(text)) fail('a whole number');
    return Number(text);
  };
  const list = <T>(item: () => T): T[] => {
    expectPunct('(');
    const items = [item()];
    while (punct(',')) items.push(item());
    expectPunct(')');
    return items;
  };
  const charsetWord = () => {
    const token = peek();
    if (!token || (token.kind !== 'word' && token.kind !== 'ident') || !/^[A-Za-z0-9_]{1,64}$/.test(token.text))
      fail('a character set or collation');
    at++;
    return token!.text.toLowerCase();
  };
  const equals = () => punct('=');

  expectWord('CREATE', 'TABLE');
  const table = name();
  if (table !== expectedName) throw new Error(`the statement creates \`${table}\`, not \`${expectedName}\``);
  const schema: TableSchema = { columns: [], indexes: [], foreignKeys: [], options: [] };
  expectPunct('(');
  do {
    if (peek()?.kind === 'ident') schema.columns.push(column());
    else if (word('CONSTRAINT')) {
      const constraint = peek()?.kind === 'ident' ? name() : undefined;
      if (isWord('FOREIGN')) schema.foreignKeys.push(foreignKey(constraint));
      else if (isWord('PRIMARY') || isWord('UNIQUE')) schema.indexes.push(index());
      else fail('FOREIGN KEY');
    } else if (isWord('FOREIGN')) schema.foreignKeys.push(foreignKey(undefined));
    else schema.indexes.push(index());
  } while (punct(','));
  expectPunct(')');

  while (peek()) {
    word('DEFAULT');
    if (word('ENGINE')) {
      equals();
      const engine = take('word', 'an engine');
      const known = (['InnoDB', 'MyISAM', 'Aria', 'MEMORY', 'ARCHIVE', 'CSV', 'BLACKHOLE'] as const).find(
        (candidate) => candidate.toUpperCase() === engine,
      );
      if (!known) throw new Error(`the engine ${engine} is not one a backup restores`);
      schema.engine = known;
    } else if (word('CHARSET') || (word('CHARACTER') && (expectWord('SET'), true))) {
      equals();
      schema.charset = charsetWord();
    } else if (word('COLLATE')) {
      equals();
      schema.collation = charsetWord();
    } else if (word('ROW_FORMAT')) {
      equals();
      const format = take('word', 'a row format');
      if (!['DEFAULT', 'DYNAMIC', 'FIXED', 'COMPRESSED', 'REDUNDANT', 'COMPACT', 'PAGE'].includes(format))
        fail('a row format');
      schema.rowFormat = format as TableSchema['rowFormat'];
    } else if (word('COMMENT')) {
      equals();
      schema.comment = take('string', 'a comment');
    } else {
      const option = take('word', 'a table option');
      if (!(NUMERIC_OPTIONS as readonly string[]).includes(option)) {
        throw new Error(`the table option ${option} is not one a backup carries`);
      }
      equals();
      const value = word('DEFAULT') ? 'DEFAULT' : take('number', 'a number');
      if (!/^(\d{1,20}|DEFAULT)$/.test(value)) fail('a whole number');
      schema.options.push([option as TableSchema['options'][number][0], value]);
    }
  }
  const parsed = TableSchema.safeParse(schema);
  if (!parsed.success)
    throw new Error(`the schema is not one a backup can hold: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;

  function column(): TableSchema['columns'][number] {
    const result: TableSchema['columns'][number] = { name: name(), type: { name: 'int' }, nullable: true };
    const typeName = take('word', 'a column type').toLowerCase();
    const type = TableSchema.shape.columns.element.shape.type.shape.name.safeParse(typeName);
    if (!type.success) throw new Error(`the column type ${typeName} is not one a backup carries`);
    result.type.name = type.data;
    if (isPunct('(')) {
      if (typeName === 'enum' || typeName === 'set') result.type.values = list(() => take('string', 'a member'));
      else result.type.args = list(integer);
    }
    for (;;) {
      if (word('UNSIGNED')) result.type.unsigned = true;
      else if (word('ZEROFILL')) result.type.zerofill = true;
      else if (word('SIGNED')) continue;
      else break;
    }
    for (;;) {
      if (word('CHARACTER')) {
        expectWord('SET');
        result.charset = charsetWord();
      } else if (word('CHARSET')) result.charset = charsetWord();
      else if (word('COLLATE')) result.collation = charsetWord();
      else if (word('NOT')) {
        expectWord('NULL');
        result.nullable = false;
      } else if (word('NULL')) result.nullable = true;
      else if (word('DEFAULT')) result.default = defaultValue();
      else if (word('ON')) {
        expectWord('UPDATE');
        const precision = now();
        result.onUpdateNow = precision === undefined ? fail('CURRENT_TIMESTAMP') : precision;
      } else if (word('AUTO_INCREMENT')) result.autoIncrement = true;
      else if (word('COMMENT')) result.comment = take('string', 'a comment');
      else if (word('CHECK')) {
        expectPunct('(');
        expectWord('JSON_VALID');
        expectPunct('(');
        if (name() !== result.name) fail('the column itself');
        expectPunct(')');
        expectPunct(')');
        result.jsonValid = true;
      } else return result;
    }
  }

  /** CURRENT_TIMESTAMP, CURRENT_TIMESTAMP(p), NOW(p) and friends: the precision (null: none); undefined if it is none of them. */
  function now(): number | null | undefined {
    if (
      !['CURRENT_TIMESTAMP', 'NOW', 'LOCALTIMESTAMP', 'LOCALTIME'].includes(peek()?.kind === 'word' ? peek()!.text : '')
    )
      return undefined;
    at++;
    if (!punct('(')) return null;
    const precision = isPunct(')') ? null : integer();
    expectPunct(')');
    return precision;
  }

  function defaultValue(): NonNullable<TableSchema['columns'][number]['default']> {
    if (word('NULL')) return { kind: 'null' };
    const token = peek();
    if (token?.kind === 'string') return (at++, { kind: 'string', value: token.text });
    if (token?.kind === 'number') return (at++, { kind: 'number', value: token.text });
    if (token?.kind === 'bits') return (at++, { kind: 'bits', value: token.text });
    const precision = now();
    if (precision !== undefined) return { kind: 'now', precision };
    return fail('a constant default (expressions are not carried)');
  }

  function index(): TableSchema['indexes'][number] {
    let kind: TableSchema['indexes'][number]['kind'];
    if (word('PRIMARY')) {
      expectWord('KEY');
      kind = 'primary';
    } else if (word('UNIQUE')) kind = 'unique';
    else if (word('FULLTEXT')) kind = 'fulltext';
    else if (word('SPATIAL')) kind = 'spatial';
    else if (isWord('KEY') || isWord('INDEX')) kind = 'key';
    else return fail('a column, key or constraint');
    if (kind !== 'primary' && !word('KEY')) word('INDEX');
    const result: TableSchema['indexes'][number] = { kind, columns: [] };
    if (kind !== 'primary' && peek()?.kind === 'ident') result.name = name();
    const using = () => {
      if (!word('USING')) return;
      const method = take('word', 'BTREE, HASH or RTREE');
      if (method !== 'BTREE' && method !== 'HASH' && method !== 'RTREE') fail('BTREE, HASH or RTREE');
      result.using = method as 'BTREE';
    };
    using();
    result.columns = list(() => {
      const part: TableSchema['indexes'][number]['columns'][number] = { name: name() };
      if (punct('(')) {
        part.length = integer();
        expectPunct(')');
      }
      if (word('DESC')) part.descending = true;
      else word('ASC');
      return part;
    });
    for (;;) {
      if (isWord('USING')) using();
      else if (word('COMMENT')) result.comment = take('string', 'a comment');
      else if (word('KEY_BLOCK_SIZE')) {
        equals();
        integer();
      } else return result;
    }
  }

  function foreignKey(constraint: string | undefined): TableSchema['foreignKeys'][number] {
    expectWord('FOREIGN', 'KEY');
    if (peek()?.kind === 'ident') name();
    const result: TableSchema['foreignKeys'][number] = { columns: list(name), table: '', references: [] };
    if (constraint !== undefined) result.name = constraint;
    expectWord('REFERENCES');
    result.table = name();
    result.references = list(name);
    for (;;) {
      if (!word('ON')) return result;
      const event = word('DELETE') ? 'onDelete' : (expectWord('UPDATE'), 'onUpdate');
      let action: string;
      if (word('RESTRICT')) action = 'RESTRICT';
      else if (word('CASCADE')) action = 'CASCADE';
      else if (word('SET')) action = word('NULL') ? 'SET NULL' : (expectWord('DEFAULT'), 'SET DEFAULT');
      else action = (expectWord('NO', 'ACTION'), 'NO ACTION');
      result[event] = action as 'CASCADE';
    }
  }
}
