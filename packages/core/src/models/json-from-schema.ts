/**
 * dev:echo's answer to a prompt with an output schema: a deterministic JSON value built from the
 * schema alone (docs/PRODUCT-RULES.md "dev:echo"). Strings carry the last user message (cut to
 * fit), so a demo still shows what it was asked. Not a general JSON Schema solver: `pattern`,
 * `not`, `if`/`then` and `dependentSchemas` are not considered.
 */

type Schema = Record<string, unknown>;

/** Past this nesting objects get their required properties only (recursive schemas stay small)… */
const OPTIONAL_DEPTH = 4;
/** …and past this one arrays get only their minItems (a schema that requires itself must end). */
const MAX_DEPTH = 12;

const FORMAT_VALUES: Record<string, string> = {
  "date-time": "2025-01-01T00:00:00Z",
  date: "2025-01-01",
  time: "00:00:00Z",
  duration: "P1D",
  email: "user@example.com",
  "idn-email": "user@example.com",
  hostname: "example.com",
  "idn-hostname": "example.com",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
  uri: "https://example.com/",
  "uri-reference": "https://example.com/",
  iri: "https://example.com/",
  "iri-reference": "https://example.com/",
  url: "https://example.com/",
  uuid: "00000000-0000-4000-8000-000000000000",
  "json-pointer": "/",
  "relative-json-pointer": "0",
  regex: ".*",
};

interface Context {
  root: Schema;
  text: string;
}

const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const numberAt = (schema: Schema, key: string): number | undefined =>
  typeof schema[key] === "number" ? (schema[key] as number) : undefined;

/** Follows a local `#/…` reference (JSON pointer into the root schema). */
function resolveRef(ref: string, root: Schema): Schema {
  if (!ref.startsWith("#")) return {};
  let target: unknown = root;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    target = isSchema(target) ? target[key] : undefined;
  }
  return isSchema(target) ? target : {};
}

/** Merges `allOf` members and the first `anyOf` / `oneOf` branch into one schema. */
function flatten(schema: Schema, context: Context, depth: number): Schema {
  let merged: Schema = { ...schema };
  if (typeof merged.$ref === "string" && depth < MAX_DEPTH * 4) {
    const { $ref, ...rest } = merged;
    merged = flatten(mergeSchemas(resolveRef($ref as string, context.root), rest), context, depth + 1);
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = merged[key];
    if (Array.isArray(branches) && branches.length > 0) {
      const { [key]: _, ...rest } = merged;
      const first = branches.find((branch) => isSchema(branch) && branch.type !== "null") ?? branches[0];
      merged = flatten(mergeSchemas(rest, isSchema(first) ? first : {}), context, depth + 1);
    }
  }
  if (Array.isArray(merged.allOf)) {
    const { allOf, ...rest } = merged;
    merged = (allOf as unknown[]).reduce<Schema>(
      (all, member) => mergeSchemas(all, isSchema(member) ? flatten(member, context, depth + 1) : {}),
      rest,
    );
  }
  return merged;
}

/** `b` over `a`; properties and required lists are combined, bounds take the tighter one. */
function mergeSchemas(a: Schema, b: Schema): Schema {
  const merged: Schema = { ...a, ...b };
  if (isSchema(a.properties) || isSchema(b.properties)) {
    merged.properties = { ...(a.properties as Schema), ...(b.properties as Schema) };
  }
  if (Array.isArray(a.required) || Array.isArray(b.required)) {
    merged.required = [
      ...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])]),
    ];
  }
  for (const key of ["minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"]) {
    const values = [numberAt(a, key), numberAt(b, key)].filter((value) => value !== undefined);
    if (values.length > 0) merged[key] = Math.max(...(values as number[]));
  }
  for (const key of ["maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"]) {
    const values = [numberAt(a, key), numberAt(b, key)].filter((value) => value !== undefined);
    if (values.length > 0) merged[key] = Math.min(...(values as number[]));
  }
  return merged;
}

/** The type to build: the first non-null one listed, else inferred from the keywords present. */
function typeOf(schema: Schema): string {
  const declared = schema.type;
  if (typeof declared === "string") return declared;
  if (Array.isArray(declared)) {
    const first = declared.find((type) => type !== "null");
    return typeof first === "string" ? first : "null";
  }
  if (isSchema(schema.properties) || schema.required !== undefined) return "object";
  if (schema.items !== undefined || schema.prefixItems !== undefined) return "array";
  if (schema.minimum !== undefined || schema.maximum !== undefined) return "number";
  return "string";
}

function stringFor(schema: Schema, context: Context, variant: number): string {
  const format = typeof schema.format === "string" ? FORMAT_VALUES[schema.format] : undefined;
  if (format !== undefined) return format;
  const suffix = variant > 0 ? ` ${variant}` : "";
  const maxLength = numberAt(schema, "maxLength") ?? Number.POSITIVE_INFINITY;
  const minLength = numberAt(schema, "minLength") ?? 0;
  // Length counts code points, as JSON Schema does.
  let chars = [...(context.text + suffix)];
  if (chars.length > maxLength) chars = [...context.text].slice(0, Math.max(0, maxLength - suffix.length));
  if (chars.length > maxLength) chars = chars.slice(0, maxLength);
  while (chars.length < minLength) chars.push("x");
  return chars.join("");
}

/** 0 when the bounds allow it, else the value nearest the lower (or upper) bound; a multiple of multipleOf. */
function numberFor(schema: Schema, integer: boolean, variant: number): number {
  const minimum = numberAt(schema, "minimum");
  const exclusiveMinimum = numberAt(schema, "exclusiveMinimum");
  const maximum = numberAt(schema, "maximum");
  const exclusiveMaximum = numberAt(schema, "exclusiveMaximum");
  const lowOk = (value: number) =>
    (minimum === undefined || value >= minimum) &&
    (exclusiveMinimum === undefined || value > exclusiveMinimum);
  const highOk = (value: number) =>
    (maximum === undefined || value <= maximum) &&
    (exclusiveMaximum === undefined || value < exclusiveMaximum);
  const lower = Math.max(minimum ?? -Infinity, exclusiveMinimum ?? -Infinity);
  const upper = Math.min(maximum ?? Infinity, exclusiveMaximum ?? Infinity);
  const base = lowOk(0) && highOk(0) ? 0 : lower !== -Infinity ? lower : upper;
  const step = numberAt(schema, "multipleOf") ?? (integer ? 1 : undefined);
  const exact = (value: number) => Number(value.toPrecision(12)) + 0;
  if (step !== undefined) {
    let multiple = Math.ceil(base / step);
    if (!lowOk(exact(multiple * step))) multiple++;
    multiple += variant;
    if (!highOk(exact(multiple * step))) {
      multiple = Math.floor(upper / step);
      if (!highOk(exact(multiple * step))) multiple--;
    }
    // A validator divides by a fractional step (0.3 / 0.1 ≠ 3): take a multiple that divides evenly.
    for (let next = multiple; next < multiple + 10 && highOk(exact(next * step)); next++) {
      if (Number.isInteger(exact(next * step) / step)) return exact(next * step);
    }
    return exact(multiple * step);
  }
  let value = base + variant;
  if (!lowOk(value)) value = upper === Infinity ? lower + 1 : (lower + upper) / 2;
  if (!highOk(value)) value = lower === -Infinity ? upper - 1 : (lower + upper) / 2;
  return value + 0;
}

function objectFor(schema: Schema, context: Context, depth: number): Record<string, unknown> {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const extra = schema.additionalProperties;
  const extraSchema = isSchema(extra) ? extra : {};
  const names = [...new Set([...required, ...(depth >= OPTIONAL_DEPTH ? [] : Object.keys(properties))])];
  const value: Record<string, unknown> = {};
  for (const name of names) {
    const propertySchema = properties[name];
    value[name] = build(isSchema(propertySchema) ? propertySchema : extraSchema, context, depth + 1, 0);
  }
  const minProperties = numberAt(schema, "minProperties") ?? 0;
  for (let index = 1; Object.keys(value).length < minProperties && extra !== false; index++) {
    value[`key${index}`] = build(extraSchema, context, depth + 1, 0);
  }
  return value;
}

function arrayFor(schema: Schema, context: Context, depth: number): unknown[] {
  const prefix = Array.isArray(schema.prefixItems) ? (schema.prefixItems as unknown[]) : [];
  const items = isSchema(schema.items) ? schema.items : {};
  const maxItems = numberAt(schema, "maxItems") ?? Number.POSITIVE_INFINITY;
  const wanted =
    depth >= MAX_DEPTH ? (numberAt(schema, "minItems") ?? 0) : Math.max(1, numberAt(schema, "minItems") ?? 1);
  const count = Math.min(Math.max(wanted, depth >= MAX_DEPTH ? 0 : prefix.length), maxItems);
  const unique = schema.uniqueItems === true;
  const value: unknown[] = [];
  for (let index = 0; index < count; index++) {
    const itemSchema = index < prefix.length ? prefix[index] : items;
    value.push(build(isSchema(itemSchema) ? itemSchema : {}, context, depth + 1, unique ? index : 0));
  }
  return value;
}

function build(raw: Schema, context: Context, depth: number, variant: number): unknown {
  const schema = flatten(raw, context, 0);
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[variant % schema.enum.length];
  switch (typeOf(schema)) {
    case "null":
      return null;
    case "boolean":
      return variant % 2 === 0;
    case "integer":
      return numberFor(schema, true, variant);
    case "number":
      return numberFor(schema, false, variant);
    case "object":
      return objectFor(schema, context, depth);
    case "array":
      return arrayFor(schema, context, depth);
    default:
      return stringFor(schema, context, variant);
  }
}

/** A value that conforms to `schema` (draft 2020-12, local `$ref`s), strings built from `text`. */
export function jsonFromSchema(schema: unknown, text: string): unknown {
  if (schema === false) return null;
  const root = isSchema(schema) ? schema : {};
  return build(root, { root, text }, 0, 0);
}
