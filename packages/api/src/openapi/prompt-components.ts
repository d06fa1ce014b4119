import {
  DEFAULT_MAX_STEPS,
  DEFAULT_TOOL_TIMEOUT_SECONDS,
  MAX_MAX_STEPS,
  MAX_TOOL_TIMEOUT_SECONDS,
  memorySpecSchema,
  outputSpecSchema,
  type PromptRun,
  promptFileSchema,
  promptVersionSchema,
  providerOptionsSchema,
  retrievalSpecSchema,
  toolChoiceSchema,
  toolSchema,
} from "@promptrun/contract";
import { z } from "zod";

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
  retrieval: retrievalSpecSchema.meta({
    description:
      "Searches a knowledge base of the tenant before the first model call: `query` is a template over the inputs (e.g. `{{question}}`), `topK` 1–50 (default 5), `mode` and `filter` as in search. The numbered chunks reach the messages as `{{retrieval}}` (`[n] <filename>: <text>`), and the run records them in `retrieval` and the `[n]` markers of its output in `citations`.",
  }),
};

/** The tool fields of a prompt (docs/PRODUCT-RULES.md "Tool outputs"), described where they appear. */
const toolFieldDescriptions = {
  tools:
    "Tools the model may call: `function` (answered by the caller: the run pauses in `requires_action` until submit_tool_outputs), `http` (one templated request the server makes), `mcp` (the tools of a remote MCP server, `allowedTools` narrowing them) and `knowledge_base` (the server searches a knowledge base of the tenant with the model's `query`; named `search_<slug>` unless `name` is given). Names are unique, `^[a-zA-Z0-9_-]{1,64}$`; `parameters` is a JSON Schema (2020-12).",
  toolChoice: "`auto` (the default), `none`, `required`, or `{name}`: the tool the model must call.",
  maxSteps: `Model calls a run may make, 1–${MAX_MAX_STEPS} (default ${DEFAULT_MAX_STEPS}); a run that needs more fails with \`max steps (N) reached\`.`,
  toolTimeoutSeconds: `Seconds a paused run waits for its tool outputs, at most ${MAX_TOOL_TIMEOUT_SECONDS} (default ${DEFAULT_TOOL_TIMEOUT_SECONDS}); then it fails with \`tool outputs were not submitted before <expiresAt>\`.`,
};
const maxStepsSchema = z.number().int().min(1).max(MAX_MAX_STEPS);
const toolTimeoutSchema = z.number().int().min(1).max(MAX_TOOL_TIMEOUT_SECONDS);

/** A prompt file as pushed (YAML or JSON): the body of `POST /api/v1/prompts`, what the CLI and tRPC `prompt.push` take. */
export const promptFileComponent = promptFileSchema
  .extend({
    output: described.output.optional(),
    memory: described.memory.optional(),
    providerOptions: described.providerOptions.optional(),
    retrieval: described.retrieval.optional(),
    tools: z.array(toolSchema).optional().meta({ description: toolFieldDescriptions.tools }),
    toolChoice: toolChoiceSchema.optional().meta({ description: toolFieldDescriptions.toolChoice }),
    maxSteps: maxStepsSchema.optional().meta({ description: toolFieldDescriptions.maxSteps }),
    toolTimeoutSeconds: toolTimeoutSchema
      .optional()
      .meta({ description: toolFieldDescriptions.toolTimeoutSeconds }),
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
    retrieval: described.retrieval.nullable(),
    tools: z.array(toolSchema).meta({ description: toolFieldDescriptions.tools }),
    toolChoice: toolChoiceSchema.nullable().meta({ description: toolFieldDescriptions.toolChoice }),
    maxSteps: maxStepsSchema.nullable().meta({ description: toolFieldDescriptions.maxSteps }),
    toolTimeoutSeconds: toolTimeoutSchema
      .nullable()
      .meta({ description: toolFieldDescriptions.toolTimeoutSeconds }),
  })
  .meta({
    description:
      "A stored prompt version; `output`, `memory`, `providerOptions`, `toolChoice`, `maxSteps` and `toolTimeoutSeconds` are null and `tools` is `[]` when the file did not set them. `contentHash` is the SHA-256 of its canonical content (the ETag).",
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
  requiredAction: null,
  steps: [
    {
      index: 0,
      model: "openai:gpt-4o-mini",
      text: '{"name":"Ada Lovelace","email":"ada@example.com","topics":["engines"]}',
      toolCalls: [],
      toolResults: [],
      finishReason: "stop",
      usage: { input: 58, inputCached: 0, output: 19, reasoning: 0, total: 77 },
      cost: {
        success: { input: 0.0000087, cachedInput: 0, output: 0.0000114, webSearch: 0, total: 0.0000201 },
        retries: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 },
        total: 0.0000201,
      },
      startedAt: "2026-01-01T12:00:00.050Z",
      finishedAt: "2026-01-01T12:00:01.200Z",
    },
  ],
  memory: { messages: 0, dropped: 0 },
  retrieval: [],
  citations: [],
  workflowRun: null,
};

const pausedAt = "2026-01-01T12:00:00.900Z";

/** The documented example of a run paused for a client tool call (phase requires_action). */
export const requiresActionRunExample: PromptRun = {
  ...completedJsonRunExample,
  id: "0196f3c1-1f0e-7a3b-8b7c-1234567890ae",
  status: "pending",
  finishedAt: null,
  output: null,
  tokenUsage: null,
  cost: null,
  prompt: { slug: "order-status", version: 1, id: "0196f3c1-1f0e-7a3b-8b7c-1234567890af" },
  outputJson: null,
  finishReason: null,
  phase: "requires_action",
  requiredAction: {
    type: "submit_tool_outputs",
    toolCalls: [{ id: "call_7Qe2", name: "lookup_order", arguments: { number: "A-1042" } }],
    expiresAt: "2026-01-01T12:10:00.900Z",
  },
  steps: [
    {
      ...completedJsonRunExample.steps[0]!,
      text: "",
      toolCalls: [{ id: "call_7Qe2", name: "lookup_order", arguments: { number: "A-1042" } }],
      finishReason: "tool-calls",
      finishedAt: pausedAt,
    },
  ],
  memory: null,
};
