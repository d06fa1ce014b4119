import {
  memorySpecSchema,
  outputSpecSchema,
  type PromptRun,
  promptFileSchema,
  promptVersionSchema,
  providerOptionsSchema,
} from "@promptrun/contract";

/**
 * The prompt-file fields of docs/PRODUCT-RULES.md "Prompts and versions" that need a word in the
 * reference: the schemas stay the contract's, only their descriptions are added here.
 */
const described = {
  output: outputSpecSchema.meta({
    description:
      "`{format: text}` (the default) or `{format: json_schema, name?, description?, strict?, schema}`: the run's output must be JSON matching `schema` (JSON Schema 2020-12, checked at push); its parsed value is the run's `outputJson`. With `strict: true`, output that does not match fails the run.",
  }),
  memory: memorySpecSchema.meta({
    description:
      "How much thread history a run carries: at most `maxMessages` messages and `maxInputTokens` estimated tokens of history; the oldest whole exchanges are dropped first, the prompt's own messages never.",
  }),
  providerOptions: providerOptionsSchema.meta({
    description:
      "The AI SDK's provider options keyed by provider (`openai`, `anthropic`, …), passed to the provider as they are.",
  }),
};

/** A prompt file as pushed (YAML or JSON): the body of `POST /api/v1/prompts`, what the CLI and tRPC `prompt.push` take. */
export const promptFileComponent = promptFileSchema
  .extend({
    output: described.output.optional(),
    memory: described.memory.optional(),
    providerOptions: described.providerOptions.optional(),
  })
  .meta({
    unusedIO: "input",
    description:
      "A prompt file (YAML or JSON). Inputs of type `image` and `file` take an https or base64 `data:` URL, `messages` a list of `{role, content}`; a message's content is a string or a list of text, image and file parts. Push it with `POST /api/v1/prompts`, the CLI or tRPC `prompt.push`.",
  });

/** A stored, immutable version of a prompt, as REST, tRPC `prompt.get` and `prompt.versions` return it. */
export const promptVersionComponent = promptVersionSchema
  .extend({
    output: described.output.nullable(),
    memory: described.memory.nullable(),
    providerOptions: described.providerOptions.nullable(),
  })
  .meta({
    description:
      "A stored prompt version; `output`, `memory` and `providerOptions` are null when the file did not set them. `contentHash` is the SHA-256 of its canonical content (the ETag).",
  });

/** The documented example of a completed run of a prompt with an output schema. */
export const completedJsonRunExample: PromptRun = {
  id: "0196f3c1-1f0e-7a3b-8b7c-1234567890ab",
  status: "completed",
  createdAt: "2026-01-01T12:00:00.000Z",
  finishedAt: "2026-01-01T12:00:01.200Z",
  output: '{"name":"Ada Lovelace","email":"ada@example.com","topics":["engines"]}',
  error: null,
  tokenUsage: { input: 58, inputCached: 0, output: 19, reasoning: 0, total: 77 },
  cost: {
    success: { input: 0.0000087, cachedInput: 0, output: 0.0000114, webSearch: 0, total: 0.0000201 },
    retries: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 },
    total: 0.0000201,
  },
  thread: "0196f3c1-1f0e-7a3b-8b7c-1234567890ac",
  channel: "default",
  prompt: { slug: "extract-contact", version: 1, id: "0196f3c1-1f0e-7a3b-8b7c-1234567890ad" },
  priority: "normal",
  environment: "production",
  metadata: {},
  startedAt: "2026-01-01T12:00:00.050Z",
  attempts: 1,
  outputJson: { name: "Ada Lovelace", email: "ada@example.com", topics: ["engines"] },
  finishReason: "stop",
  phase: null,
  memory: { messages: 0, dropped: 0 },
};
