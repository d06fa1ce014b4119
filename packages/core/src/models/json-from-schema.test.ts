import { describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { jsonFromSchema } from "./json-from-schema.ts";

const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));

const TEXT = "Where is my order 4411? It was due yesterday.";

const schemas: Record<string, Record<string, unknown>> = {
  "the design's support answer": {
    type: "object",
    properties: { reply: { type: "string" }, escalate: { type: "boolean" } },
    required: ["reply", "escalate"],
    additionalProperties: false,
  },
  "bounded strings and formats": {
    type: "object",
    properties: {
      short: { type: "string", maxLength: 5 },
      long: { type: "string", minLength: 80 },
      at: { type: "string", format: "date-time" },
      day: { type: "string", format: "date" },
      mail: { type: "string", format: "email" },
      link: { type: "string", format: "uri" },
      id: { type: "string", format: "uuid" },
      host: { type: "string", format: "hostname" },
      ip: { type: "string", format: "ipv4" },
    },
    required: ["short", "long", "at", "day", "mail", "link", "id", "host", "ip"],
  },
  "numbers within bounds": {
    type: "object",
    properties: {
      positive: { type: "number", exclusiveMinimum: 0 },
      score: { type: "number", minimum: 1, maximum: 5 },
      negative: { type: "integer", maximum: -3 },
      below: { type: "number", exclusiveMaximum: -0.5 },
      step: { type: "number", minimum: 0.25, multipleOf: 0.1 },
      count: { type: "integer", minimum: 2.5 },
      tight: { type: "number", exclusiveMinimum: 1, exclusiveMaximum: 2 },
    },
    required: ["positive", "score", "negative", "below", "step", "count", "tight"],
  },
  "enum and const": {
    type: "object",
    properties: {
      mood: { enum: ["happy", "sad"] },
      version: { const: 2 },
      kind: { type: "string", enum: ["refund", "exchange"] },
    },
    required: ["mood", "version", "kind"],
  },
  "arrays with minItems, maxItems, uniqueItems and prefixItems": {
    type: "object",
    properties: {
      tags: { type: "array", items: { type: "string" }, minItems: 3, uniqueItems: true },
      none: { type: "array", items: { type: "string" }, maxItems: 0 },
      pair: { type: "array", prefixItems: [{ type: "integer" }, { type: "string" }], items: false },
      scores: { type: "array", items: { type: "integer", minimum: 1 }, minItems: 2, uniqueItems: true },
    },
    required: ["tags", "none", "pair", "scores"],
  },
  "anyOf, oneOf and nullable types": {
    type: "object",
    properties: {
      either: { anyOf: [{ type: "string", maxLength: 3 }, { type: "number" }] },
      one: { oneOf: [{ type: "null" }, { type: "integer", minimum: 7 }] },
      maybe: { type: ["null", "string"], minLength: 2 },
      onlyNull: { type: "null" },
    },
    required: ["either", "one", "maybe", "onlyNull"],
  },
  "allOf merged": {
    allOf: [
      { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
      { properties: { b: { type: "integer", minimum: 3 } }, required: ["b"] },
    ],
    unevaluatedProperties: false,
  },
  "local $ref and $defs": {
    $defs: {
      address: {
        type: "object",
        properties: { city: { type: "string" }, zip: { type: "string", maxLength: 5 } },
        required: ["city", "zip"],
        additionalProperties: false,
      },
    },
    type: "object",
    properties: { home: { $ref: "#/$defs/address" }, work: { $ref: "#/$defs/address" } },
    required: ["home", "work"],
  },
  "a recursive tree": {
    $defs: {
      node: {
        type: "object",
        properties: {
          name: { type: "string" },
          children: { type: "array", items: { $ref: "#/$defs/node" } },
        },
        required: ["name"],
      },
    },
    $ref: "#/$defs/node",
  },
  "required without properties, minProperties and typed additionalProperties": {
    type: "object",
    required: ["x"],
    minProperties: 3,
    additionalProperties: { type: "integer", minimum: 1 },
  },
  "a top-level array of objects": {
    type: "array",
    items: {
      type: "object",
      properties: { sku: { type: "string", minLength: 1 }, qty: { type: "integer", minimum: 1 } },
      required: ["sku", "qty"],
    },
  },
  "no type at all": { description: "anything" },
  "a top-level string with a tiny maxLength": { type: "string", maxLength: 1 },
};

describe("jsonFromSchema", () => {
  for (const [name, schema] of Object.entries(schemas)) {
    test(`conforms: ${name}`, () => {
      const value = jsonFromSchema(schema, TEXT);
      const validate = ajv.compile(schema);
      const valid = validate(value);
      expect({ valid, errors: validate.errors ?? null, value }).toMatchObject({ valid: true, errors: null });
    });
  }

  test("strings carry the message, cut to maxLength; objects list required properties first", () => {
    const value = jsonFromSchema(
      {
        type: "object",
        properties: { extra: { type: "integer" }, title: { type: "string", maxLength: 10 } },
        required: ["title"],
      },
      TEXT,
    );
    expect(value).toEqual({ title: "Where is m", extra: 0 });
    expect(Object.keys(value as object)).toEqual(["title", "extra"]);
  });

  test("is deterministic", () => {
    for (const schema of Object.values(schemas)) {
      expect(JSON.stringify(jsonFromSchema(schema, TEXT))).toBe(JSON.stringify(jsonFromSchema(schema, TEXT)));
    }
  });
});
