import { z } from "zod";
import { slugSchema, tagSchema, uuidSchema } from "./ids.ts";
import { refusingProtoKey } from "./own-keys.ts";

export const inputTypeSchema = z.enum(["string", "number", "integer", "boolean", "array", "object"]);
export type InputType = z.infer<typeof inputTypeSchema>;

export const inputDeclarationSchema = z.strictObject({
  type: inputTypeSchema.default("string"),
  optional: z.boolean().optional(),
  default: z.unknown().optional(),
  description: z.string().optional(),
});
export type InputDeclaration = z.infer<typeof inputDeclarationSchema>;

export const messageRoleSchema = z.enum(["system", "user", "assistant"]);
export const promptMessageSchema = z.strictObject({ role: messageRoleSchema, content: z.string() });
export type PromptMessage = z.infer<typeof promptMessageSchema>;

/** `provider:model`, e.g. `openai:gpt-4o-mini`, `anthropic:claude-sonnet-4-5`, `dev:echo`, `ollama:llama3.2`. */
export const modelRefSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9\-_]*:[^\s]+$/, "must be provider:model, e.g. openai:gpt-4o-mini");

export const promptParamsSchema = refusingProtoKey(
  z
    .object({
      temperature: z.number().min(0).max(2).optional(),
      topP: z.number().min(0).max(1).optional(),
      maxOutputTokens: z.number().int().positive().optional(),
      stopSequences: z.array(z.string()).optional(),
      seed: z.number().int().optional(),
      /** dev:echo only: delay between streamed words. */
      delayMs: z.number().int().min(0).max(60_000).optional(),
    })
    .catchall(z.unknown()),
  "not allowed as a param name",
);
export type PromptParams = z.infer<typeof promptParamsSchema>;

/** A prompt file (YAML or JSON), docs/PRODUCT-RULES.md "Prompts and versions". */
export const promptFileSchema = z.strictObject({
  slug: slugSchema,
  description: z.string().optional(),
  model: modelRefSchema,
  params: promptParamsSchema.default({}),
  inputs: refusingProtoKey(
    z.record(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "input names are identifiers"),
      inputDeclarationSchema,
    ),
    "reserved: not allowed as an input name",
  ).default({}),
  messages: z.array(promptMessageSchema).min(1),
  tags: z.array(tagSchema).default([]),
});
export type PromptFile = z.infer<typeof promptFileSchema>;
export type PromptFileInput = z.input<typeof promptFileSchema>;

/** The immutable content of a version (the file minus slug and tags). */
export type PromptDefinition = Omit<PromptFile, "slug" | "tags">;

export const promptVersionSchema = z.object({
  id: uuidSchema,
  slug: slugSchema,
  version: z.number().int().positive(),
  model: z.string(),
  params: promptParamsSchema,
  inputs: z.record(z.string(), inputDeclarationSchema),
  messages: z.array(promptMessageSchema),
  description: z.string().nullable(),
  tags: z.array(z.string()),
  createdAt: z.iso.datetime(),
});
export type PromptVersion = z.infer<typeof promptVersionSchema>;

export const promptSummarySchema = z.object({
  id: uuidSchema,
  slug: slugSchema,
  latestVersion: z.number().int().positive(),
  tags: z.record(z.string(), z.number().int().positive()),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type PromptSummary = z.infer<typeof promptSummarySchema>;

export const pushResultSchema = z.object({
  slug: slugSchema,
  version: z.number().int().positive(),
  id: uuidSchema,
  tags: z.array(z.string()),
  created: z.boolean(),
});
export type PushResult = z.infer<typeof pushResultSchema>;
