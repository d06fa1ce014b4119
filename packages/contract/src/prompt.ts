import { z } from "zod";
import { slugSchema, tagSchema, uuidSchema } from "./ids.ts";
import { refusingProtoKey } from "./own-keys.ts";
import { retrievalSpecSchema, SEARCH_TOP_K_MAX } from "./retrieval.ts";

/**
 * `image` and `file` take an https URL or a base64 `data:` URL; `messages` takes a list of
 * `{role: user|assistant, content: string}` (docs/PRODUCT-RULES.md "Prompt files").
 */
export const inputTypeSchema = z.enum([
  "string",
  "number",
  "integer",
  "boolean",
  "array",
  "object",
  "image",
  "file",
  "messages",
]);
export type InputType = z.infer<typeof inputTypeSchema>;

export const inputDeclarationSchema = z.strictObject({
  type: inputTypeSchema.default("string"),
  optional: z.boolean().optional(),
  default: z.unknown().optional(),
  description: z.string().optional(),
});
export type InputDeclaration = z.infer<typeof inputDeclarationSchema>;

export const messageRoleSchema = z.enum(["system", "user", "assistant"]);

/** Message content parts. `image` / `file` name an input of that type: `"{{screenshot}}"`. */
export const textPartSchema = z.strictObject({ type: z.literal("text"), text: z.string() });
export const imagePartSchema = z.strictObject({
  type: z.literal("image"),
  image: z.string(),
  mediaType: z.string().optional(),
});
export const filePartSchema = z.strictObject({
  type: z.literal("file"),
  file: z.string(),
  mediaType: z.string().optional(),
  filename: z.string().optional(),
});
export const contentPartSchema = z.discriminatedUnion("type", [
  textPartSchema,
  imagePartSchema,
  filePartSchema,
]);
export type ContentPart = z.infer<typeof contentPartSchema>;
export type TextPart = z.infer<typeof textPartSchema>;
export type ImagePart = z.infer<typeof imagePartSchema>;
export type FilePart = z.infer<typeof filePartSchema>;

/** A string, or a list of parts (text, image, file). */
export const messageContentSchema = z.union([z.string(), z.array(contentPartSchema).min(1)]);
export type MessageContent = z.infer<typeof messageContentSchema>;

export const promptMessageSchema = z.strictObject({ role: messageRoleSchema, content: messageContentSchema });
export type PromptMessage = z.infer<typeof promptMessageSchema>;

/** At most this many entries in a `messages` input. */
export const MESSAGES_INPUT_MAX_ENTRIES = 200;
/** One entry of a `messages` input: prior conversation turns supplied by the caller. */
export const historyMessageSchema = z.strictObject({
  role: z.enum(["user", "assistant"]),
  content: z.string(),
});
export type HistoryMessage = z.infer<typeof historyMessageSchema>;

export const reasoningEffortSchema = z.enum(["minimal", "low", "medium", "high"]);
export type ReasoningEffort = z.infer<typeof reasoningEffortSchema>;
/** `params.reasoning`: an effort level, a token budget, or both (docs/providers.md maps them). */
export const reasoningSchema = z
  .strictObject({
    effort: reasoningEffortSchema.optional(),
    budgetTokens: z.number().int().min(1).max(1_000_000).optional(),
  })
  .refine((value) => value.effort !== undefined || value.budgetTokens !== undefined, {
    message: "give effort (minimal | low | medium | high) or budgetTokens",
  });
export type Reasoning = z.infer<typeof reasoningSchema>;

/** A JSON Schema document (compiled at push as draft 2020-12). */
export const jsonSchemaDocumentSchema = z.record(z.string(), z.unknown());

/** `output`: plain text (the default) or JSON matching a schema. */
export const outputSpecSchema = z.discriminatedUnion("format", [
  z.strictObject({ format: z.literal("text") }),
  z.strictObject({
    format: z.literal("json_schema"),
    name: z
      .string()
      .regex(/^[a-zA-Z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, _ or -")
      .optional(),
    description: z.string().optional(),
    strict: z.boolean().optional(),
    schema: jsonSchemaDocumentSchema,
  }),
]);
export type OutputSpec = z.infer<typeof outputSpecSchema>;

/** `memory`: how much thread history a run may carry. */
export const memorySpecSchema = z.strictObject({
  maxMessages: z.number().int().min(0).max(1_000).optional(),
  maxInputTokens: z.number().int().min(1).max(10_000_000).optional(),
});
export type MemorySpec = z.infer<typeof memorySpecSchema>;

/** `providerOptions`: the AI SDK's provider options, passed through as is, keyed by provider. */
export const providerOptionsSchema = refusingProtoKey(
  z.record(
    z.string().regex(/^[a-zA-Z][a-zA-Z0-9_-]*$/, "provider names are identifiers"),
    refusingProtoKey(z.record(z.string(), z.unknown())),
  ),
);
export type ProviderOptions = z.infer<typeof providerOptionsSchema>;

/** A tool name: what the model calls it by (also an MCP tool's own name). */
export const toolNameSchema = z
  .string()
  .regex(/^[a-zA-Z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, _ or -");

/** Templated header values (`{{env.NAME}}`, `{{args.NAME}}`, declared inputs). */
const toolHeadersSchema = refusingProtoKey(
  z.record(z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "must be an HTTP header name"), z.string()),
);

/** Executed by the caller: the run pauses in `requires_action` (docs/TOOLS.md). */
export const functionToolSchema = z.strictObject({
  type: z.literal("function"),
  name: toolNameSchema,
  description: z.string().optional(),
  parameters: jsonSchemaDocumentSchema,
});

/** Executed by the server: one templated HTTP request, its response body is the tool's output. */
export const httpToolSchema = z.strictObject({
  type: z.literal("http"),
  name: toolNameSchema,
  description: z.string().optional(),
  parameters: jsonSchemaDocumentSchema,
  request: z.strictObject({
    method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]).default("GET"),
    url: z.string().min(1),
    headers: toolHeadersSchema.optional(),
    /** A templated body (JSON text or any text); absent for POST/PUT/PATCH: the arguments as JSON. */
    body: z.string().optional(),
  }),
  /** Seconds before the request is abandoned (a tool error the model sees). Default 30. */
  timeoutSeconds: z.number().int().min(1).max(300).optional(),
});

/** The tools of a remote MCP server (Streamable HTTP), executed by the server. */
export const mcpToolSchema = z.strictObject({
  type: z.literal("mcp"),
  server: z.strictObject({ url: z.string().min(1), headers: toolHeadersSchema.optional() }),
  /** Only these of the server's tools are offered to the model; absent: all of them. */
  allowedTools: z.array(toolNameSchema).min(1).optional(),
  timeoutSeconds: z.number().int().min(1).max(300).optional(),
});

/**
 * Searches a knowledge base of the tenant when the model decides to (executed by the server). The
 * model calls it `search_<slug>` (non-identifier characters as `_`) unless `name` says otherwise.
 */
export const knowledgeBaseToolSchema = z.strictObject({
  type: z.literal("knowledge_base"),
  knowledgeBase: slugSchema,
  name: toolNameSchema.optional(),
  topK: z.number().int().min(1).max(SEARCH_TOP_K_MAX).optional(),
  description: z.string().optional(),
});

export const toolSchema = z.discriminatedUnion("type", [
  functionToolSchema,
  httpToolSchema,
  mcpToolSchema,
  knowledgeBaseToolSchema,
]);
export type ToolDefinition = z.infer<typeof toolSchema>;
export type FunctionToolDefinition = z.infer<typeof functionToolSchema>;
export type HttpToolDefinition = z.infer<typeof httpToolSchema>;
export type McpToolDefinition = z.infer<typeof mcpToolSchema>;
export type KnowledgeBaseToolDefinition = z.infer<typeof knowledgeBaseToolSchema>;

/** `toolChoice`: auto | none | required | {name}. */
export const toolChoiceSchema = z.union([
  z.enum(["auto", "none", "required"]),
  z.strictObject({ name: toolNameSchema }),
]);
export type ToolChoice = z.infer<typeof toolChoiceSchema>;

/** Model calls a run may make (`maxSteps`); default when the prompt says nothing. */
export const DEFAULT_MAX_STEPS = 8;
export const MAX_MAX_STEPS = 32;
/** How long a paused run waits for the caller's tool outputs by default (seconds). */
export const DEFAULT_TOOL_TIMEOUT_SECONDS = 600;
/** At most 7 days. */
export const MAX_TOOL_TIMEOUT_SECONDS = 7 * 24 * 3600;
export const MAX_TOOLS_PER_PROMPT = 128;

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
      reasoning: reasoningSchema.optional(),
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
  output: outputSpecSchema.optional(),
  memory: memorySpecSchema.optional(),
  providerOptions: providerOptionsSchema.optional(),
  tools: z.array(toolSchema).max(MAX_TOOLS_PER_PROMPT).optional(),
  toolChoice: toolChoiceSchema.optional(),
  maxSteps: z.number().int().min(1).max(MAX_MAX_STEPS).optional(),
  toolTimeoutSeconds: z.number().int().min(1).max(MAX_TOOL_TIMEOUT_SECONDS).optional(),
  retrieval: retrievalSpecSchema.optional(),
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
  output: outputSpecSchema.nullable(),
  memory: memorySpecSchema.nullable(),
  providerOptions: providerOptionsSchema.nullable(),
  tools: z.array(toolSchema),
  toolChoice: toolChoiceSchema.nullable(),
  maxSteps: z.number().int().nullable(),
  toolTimeoutSeconds: z.number().int().nullable(),
  retrieval: retrievalSpecSchema.nullable(),
  description: z.string().nullable(),
  tags: z.array(z.string()),
  createdAt: z.iso.datetime(),
  /** SHA-256 (hex) of the version's canonical content; REST sends it as the `ETag`. */
  contentHash: z.string(),
});
export type PromptVersion = z.infer<typeof promptVersionSchema>;

export const promptSummarySchema = z.object({
  id: uuidSchema,
  slug: slugSchema,
  /** The latest version's description. */
  description: z.string().nullable(),
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
