import { z } from "zod";
import { slugSchema } from "./ids.ts";
import { modelRefSchema, outputSpecSchema, promptParamsSchema, providerOptionsSchema } from "./prompt.ts";
import { createRunRequestSchema, runMemorySchema } from "./run.ts";
import { chatMessageSchema } from "./thread-messages.ts";

/**
 * Body of `POST /api/v1/prompts/{slug}/{version}/render`: the create-run fields that change what
 * a run sends (docs/PRODUCT-RULES.md "Render"), validated as on create-run; `priority` and
 * `metadata` are not accepted here (unknown fields are a 400, as on create-run).
 */
export const renderRequestSchema = createRunRequestSchema
  .pick({ inputs: true, thread: true, channel: true, environment: true, envVars: true })
  .meta({
    id: "RenderPromptRequest",
    description:
      "What a create-run body would carry, minus priority and metadata: inputs, and the thread, channel, environment and envVars that decide the memory window and the env vars.",
  });
export type RenderRequest = z.infer<typeof renderRequestSchema>;

/** A function or http tool as the model is offered it (what it may call, not how it runs). */
const offeredToolFields = {
  name: z.string(),
  description: z.string().nullable(),
  parameters: z
    .record(z.string(), z.unknown())
    .meta({ description: "The tool's JSON Schema of its arguments." }),
};

/**
 * A prompt tool as render shows it: function, http and knowledge_base tools as offered to the model; an MCP
 * server by its URL (no query string, no credentials) and its allowed tools, unlisted (render
 * makes no network call, so the server's own list is not read).
 */
export const renderedToolSchema = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("function"), ...offeredToolFields }),
    z.object({ type: z.literal("http"), ...offeredToolFields }),
    z.object({
      type: z.literal("knowledge_base"),
      ...offeredToolFields,
      knowledgeBase: z.string().meta({ description: "The slug of the knowledge base the tool searches." }),
    }),
    z.object({
      type: z.literal("mcp"),
      server: z
        .string()
        .meta({ description: "The server's URL without query string, fragment or user info." }),
      allowedTools: z
        .array(z.string())
        .nullable()
        .meta({ description: "The tools of the server offered to the model; null: all of them." }),
    }),
  ])
  .meta({ id: "RenderedTool" });
export type RenderedTool = z.infer<typeof renderedToolSchema>;

/** What a run of the version would send to its model, without calling it. */
export const renderedPromptSchema = z
  .object({
    model: modelRefSchema.meta({ description: "The version's `provider:model`." }),
    params: promptParamsSchema.meta({ description: "The version's params, as the run passes them." }),
    messages: z.array(chatMessageSchema).meta({
      description:
        "In send order: the prompt's system messages, the thread's memory window, then the rendered user/assistant messages. Every `{{env.NAME}}` shows as `[env:NAME]`; `{{retrieval}}` (no search is made) as `[retrieval: knowledge base '<slug>', query \"<query>\"]`.",
    }),
    tools: z.array(renderedToolSchema).meta({
      description:
        "The version's tools in its order: function and http tools as offered to the model, MCP servers by URL and allowed tools.",
    }),
    output: outputSpecSchema
      .nullable()
      .meta({ description: "The version's `output` (structured output); null when it sets none." }),
    providerOptions: providerOptionsSchema.nullable().meta({
      description: "The version's `providerOptions`, passed to the provider as they are; null when none.",
    }),
    memory: runMemorySchema,
  })
  .meta({
    id: "RenderedPrompt",
    description:
      "The exact request a run would send (same code path as the engine), with env var values masked as `[env:NAME]`.",
  });
export type RenderedPrompt = z.infer<typeof renderedPromptSchema>;

/** tRPC `prompt.render`: the REST body plus the path's slug and version segment. */
export const promptRenderInputSchema = renderRequestSchema.extend({
  slug: slugSchema,
  version: z.string().min(1).max(200),
});
