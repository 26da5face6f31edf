import fc from 'fast-check';

/** Just enough of an OpenAPI 3.1 document to generate requests from it. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}
export interface OpenApiOperation {
  parameters?: { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema?: JsonSchema }[];
  requestBody?: { content: Record<string, { schema?: JsonSchema }> };
}
export type JsonSchema = Record<string, unknown> & { $ref?: string };

/** Values that break naive code: huge, empty, traversal, control characters, numbers as text, injection attempts. */
export const nastyString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '0',
    '-1',
    '1e309',
    'NaN',
    'null',
    'true',
    '[]',
    '{}',
    '../../etc/passwd',
    '..',
    '%',
    '%00',
    '%ZZ',
    '\u0000',
    '\uFFFF',
    '\uD800',
    '😀',
    "' OR 1=1 --",
    '<script>',
    '${x}',
    '__proto__',
    'constructor',
    'a/b',
    'A'.repeat(5000),
  ),
);

export const junk: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  fc.integer(),
  fc.double(),
  fc.constantFrom(Number.MAX_SAFE_INTEGER + 2, -0, 1e308),
  fc.boolean(),
  fc.constant(null),
  fc.array(nastyString, { maxLength: 3 }),
  fc.dictionary(nastyString, nastyString, { maxKeys: 3 }),
);

function resolveRef(schema: JsonSchema | undefined, doc: OpenApiDocument): JsonSchema {
  let current = schema ?? {};
  for (let hops = 0; current.$ref && hops < 10; hops++)
    current = doc.components?.schemas?.[current.$ref.replace('#/components/schemas/', '')] ?? {};
  return current;
}

/**
 * Values for `schema`: mostly valid ones (so requests reach the code behind validation), some
 * junk of any type at any depth. `special(name)` overrides fields by name (URLs, ids).
 */
export function arbitraryFor(
  schema: JsonSchema | undefined,
  doc: OpenApiDocument,
  special: (name: string) => fc.Arbitrary<unknown> | undefined,
  name = '',
  depth = 0,
): fc.Arbitrary<unknown> {
  const own = special(name);
  if (own) return own;
  const valid = validFor(resolveRef(schema, doc), doc, special, depth);
  return fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: junk });
}

function validFor(
  schema: JsonSchema,
  doc: OpenApiDocument,
  special: (name: string) => fc.Arbitrary<unknown> | undefined,
  depth: number,
): fc.Arbitrary<unknown> {
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (variants) return fc.oneof(...variants.map((variant) => arbitraryFor(variant, doc, special, '', depth + 1)));
  if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]));
  if ('const' in schema) return fc.constant(schema.const);
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string | undefined];
  const nullable = types.includes('null') || schema.nullable === true;
  const type = types.find((candidate) => candidate !== 'null');
  const base = baseFor(type, schema, doc, special, depth);
  return nullable ? fc.oneof(base, fc.constant(null)) : base;
}

function baseFor(
  type: string | undefined,
  schema: JsonSchema,
  doc: OpenApiDocument,
  special: (name: string) => fc.Arbitrary<unknown> | undefined,
  depth: number,
): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string': {
      const minLength = (schema.minLength as number | undefined) ?? 0;
      const maxLength = Math.min((schema.maxLength as number | undefined) ?? 60, 200);
      const options: fc.Arbitrary<unknown>[] = [fc.string({ minLength, maxLength: Math.max(minLength, maxLength) })];
      if (typeof schema.pattern === 'string')
        options.push(fc.stringMatching(new RegExp(schema.pattern)).filter((value) => value.length <= 200));
      if (schema.format === 'date-time')
        options.push(fc.date({ noInvalidDate: true }).map((date) => date.toISOString()));
      return fc.oneof(...options);
    }
    case 'integer':
    case 'number': {
      const min = schema.minimum as number | undefined;
      const max = schema.maximum as number | undefined;
      return type === 'integer'
        ? fc.integer({ min: min ?? -1_000_000, max: max ?? 1_000_000 })
        : fc.double({ min: min ?? -1e6, max: max ?? 1e6, noNaN: true });
    }
    case 'boolean':
      return fc.boolean();
    case 'array':
      if (depth > 4) return fc.constant([]);
      return fc.array(arbitraryFor(schema.items as JsonSchema, doc, special, '', depth + 1), {
        minLength: (schema.minItems as number | undefined) ?? 0,
        maxLength: Math.min((schema.maxItems as number | undefined) ?? 4, 4),
      });
    case 'object':
    case undefined: {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      if (depth > 4 || Object.keys(properties).length === 0)
        return type === 'object' ? fc.dictionary(nastyString, junk, { maxKeys: 2 }) : junk;
      const required = new Set((schema.required ?? []) as string[]);
      const record = Object.fromEntries(
        Object.entries(properties).map(([key, property]) => [
          key,
          arbitraryFor(property, doc, special, key, depth + 1),
        ]),
      );
      const optional = Object.keys(properties).filter((key) => !required.has(key));
      return fc
        .tuple(fc.record(record, { requiredKeys: [...required] }), fc.subarray(optional))
        .map(([value, drop]) => {
          // Sometimes a required field goes missing, sometimes an unknown one comes along.
          const result = { ...value } as Record<string, unknown>;
          for (const key of drop.slice(0, 1)) delete result[key];
          return result;
        });
    }
    default:
      return junk;
  }
}
