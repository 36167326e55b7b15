/**
 * A small JSON Schema checker for the one schema the package ships
 * (schema/crawl-result.schema.json), so its test needs no new dependency.
 *
 * It reads only the keywords that schema uses: `type` (one or a list;
 * `integer` as JSON Schema means it), `const`, `enum`, `properties`,
 * `required`, `items`, `oneOf`, `minimum` and `$ref` to `#/$defs/NAME`. A
 * keyword it does not know is an error, so the schema cannot grow past what
 * is checked without this file saying so. With `strict`, a property the
 * schema does not declare is an error too: the schema lets readers ignore
 * new fields, but the test wants every field the command writes described.
 */

/** A JSON Schema, as this checker reads it. */
type Schema = { [keyword: string]: unknown };

const KNOWN = new Set([
  "$schema", "$id", "title", "description", "$defs", "$ref", "type", "const", "enum", "properties", "required", "items", "oneOf", "minimum",
]);

/** The problems of `value` against `schema` (inside `root`, for `$ref`), each as `PATH: what`; empty when it is valid. */
export function schemaErrors(value: unknown, schema: Schema, options: { strict: boolean }, root: Schema = schema, path = "$"): string[] {
  for (const keyword of Object.keys(schema)) {
    if (!KNOWN.has(keyword)) throw new Error(`json-schema.ts does not check the keyword ${keyword} (at ${path})`);
  }
  if (typeof schema.$ref === "string") {
    const name = /^#\/\$defs\/(\w+)$/.exec(schema.$ref)?.[1];
    const target = name === undefined ? undefined : (root.$defs as Record<string, Schema> | undefined)?.[name];
    if (target === undefined) throw new Error(`unresolved $ref ${schema.$ref}`);
    return schemaErrors(value, target, options, root, path);
  }
  const errors: string[] = [];
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    if (!types.some((type) => hasType(value, type))) return [`${path}: expected ${types.join(" or ")}, got ${JSON.stringify(value)}`];
  }
  if ("const" in schema && value !== schema.const) errors.push(`${path}: expected ${JSON.stringify(schema.const)}, got ${JSON.stringify(value)}`);
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) errors.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  if (typeof schema.minimum === "number" && typeof value === "number" && value < schema.minimum) errors.push(`${path}: ${value} is below ${schema.minimum}`);
  if (Array.isArray(schema.oneOf)) {
    const passing = (schema.oneOf as Schema[]).filter((option) => schemaErrors(value, option, options, root, path).length === 0).length;
    if (passing !== 1) errors.push(`${path}: matches ${passing} of the oneOf schemas, not exactly 1`);
  }
  if (schema.items !== undefined && Array.isArray(value)) {
    for (const [index, item] of value.entries()) errors.push(...schemaErrors(item, schema.items as Schema, options, root, `${path}[${index}]`));
  }
  if (isObject(value)) {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    for (const name of (schema.required ?? []) as string[]) {
      if (!(name in value)) errors.push(`${path}: ${name} is missing`);
    }
    for (const [name, field] of Object.entries(value)) {
      if (name in properties) errors.push(...schemaErrors(field, properties[name], options, root, `${path}.${name}`));
      else if (options.strict && schema.properties !== undefined) errors.push(`${path}: ${name} is not in the schema`);
    }
  }
  return errors;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case "null":
      return value === null;
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return isObject(value);
    default:
      return typeof value === type;
  }
}
