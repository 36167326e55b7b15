/**
 * Checks documents against the JSON Schema the package ships
 * (schema/crawl-result.schema.json) with Ajv, the validator most JSON Schema
 * users reach for, in its draft 2020-12 mode and with its formats (`date-time`).
 *
 * With `strict`, every object that lists its properties is closed
 * (`additionalProperties: false`) for the check: the shipped schema lets
 * readers ignore fields they do not know, but the test wants every field the
 * command writes described.
 */
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

/** A JSON Schema, as read from its file. */
type Schema = { [keyword: string]: unknown };

// Both packages are CommonJS with a `default` export; under Node's ES module loader the class or function is that `default`.
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

/** `schema` with `additionalProperties: false` on every object schema that lists `properties`. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (typeof schema !== "object" || schema === null) return schema;
  const copy = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === "properties" ? Object.fromEntries(Object.entries(value as Schema).map(([name, field]) => [name, closed(field)])) : closed(value)]));
  if ("properties" in copy && !("additionalProperties" in copy)) copy.additionalProperties = false;
  return copy;
}

/**
 * The problems of `value` against `schema` (the root schema, or one of its
 * `$defs` when `root` is given), each as `PATH: what`; empty when it is valid.
 */
export function schemaErrors(value: unknown, schema: Schema, options: { strict: boolean }, root: Schema = schema): string[] {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  ajv.addSchema((options.strict ? closed(root) : root) as Schema);
  const id = root.$id as string;
  const name = schema === root ? null : Object.entries(root.$defs as Record<string, Schema>).find(([, def]) => def === schema)?.[0];
  if (name === undefined) throw new Error("schemaErrors: the schema is neither the root nor one of its $defs");
  const validate = ajv.getSchema(name === null ? id : `${id}#/$defs/${name}`);
  if (validate === undefined) throw new Error(`schemaErrors: Ajv has no schema for ${name ?? id}`);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `$${error.instancePath}: ${error.message ?? error.keyword}${error.keyword === "additionalProperties" ? ` (${String(error.params.additionalProperty)})` : ""}`);
}
