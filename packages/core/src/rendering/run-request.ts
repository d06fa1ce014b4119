/**
 * The messages a run sends, in send order (docs/PRODUCT-RULES.md "Thread memory" and "Render"):
 * the prompt's system messages, the channel's memory window, then this exchange (the rendered
 * user/assistant messages). One function for the engine (core/src/engine/run-executor.ts), for
 * render (core/src/services/run-render.ts) and for a run's messages read afterwards
 * (core/src/services/run-messages.ts, "Run messages"), so both show what a run sends, not a copy.
 */
import type { ChatMessage, PromptDefinition, PromptMessage, RunMemory } from "@promptrun/contract";
import { type MemoryBound, memoryMessageOf, promptMessageOfMemory, readRunMemory } from "../memory-window.ts";
import type { MemoryMessage, RunRecord, RunStore, ThreadMemory } from "../ports.ts";
import { renderMessages, renderTemplate } from "../templating/template.ts";

/** Where the request's memory comes from: a channel of a thread, read within the server's bound. */
export interface MemorySource {
  runs: Pick<RunStore, "memory">;
  bound: MemoryBound;
  channel: Pick<RunRecord, "tenantId" | "threadId" | "channel">;
}

/** History read already: the one a run carried (services/run-messages.ts). */
export interface CarriedMemory {
  carried: ThreadMemory;
}

export interface RenderedRunRequest {
  /** What the model receives: system messages, memory window, this exchange. */
  messages: ChatMessage[];
  /** The rendered user/assistant messages: what this exchange adds to the channel memory. */
  exchange: MemoryMessage[];
  /** History messages carried and left out (the run's `memory`). */
  memoryWindow: RunMemory;
}

const NO_MEMORY = { messages: [] as MemoryMessage[], dropped: 0 };

/**
 * Renders the prompt with `inputs` and `env` (templating/template.ts: a `{{env.NAME}}` that `env`
 * lacks throws; `retrieval` fills `{{retrieval}}`), then reads the memory window, whose bound
 * depends on the rendered messages.
 * `memory` null: no thread, so no history (a render without `thread`); carried: that history.
 */
export async function renderRunRequest(
  definition: Pick<PromptDefinition, "model" | "memory" | "params" | "messages" | "inputs">,
  inputs: Record<string, unknown>,
  env: Record<string, string>,
  memory: MemorySource | CarriedMemory | null,
  retrieval?: string,
): Promise<RenderedRunRequest> {
  // `{{retrieval}}` (a prompt with `retrieval:`, which may not declare an input of that name).
  const values = retrieval === undefined ? inputs : { ...inputs, retrieval };
  const rendered = renderMessages(definition, values, env);
  const window =
    memory === null
      ? NO_MEMORY
      : "carried" in memory
        ? memory.carried
        : await readRunMemory(memory.runs, memory.channel, memory.bound, definition, rendered);
  const system = rendered.filter((message) => message.role === "system");
  const own = rendered.filter(
    (message): message is PromptMessage & { role: "user" | "assistant" } => message.role !== "system",
  );
  return {
    messages: [...system, ...window.messages.map(promptMessageOfMemory), ...own],
    exchange: own.map(memoryMessageOf),
    memoryWindow: { messages: window.messages.length, dropped: window.dropped },
  };
}

/**
 * The env a render fills templates with: every name set (on the environment or in the request's
 * envVars) shows as `[env:NAME]`, so no value can reach the answer; a name set nowhere stays
 * missing, and rendering fails exactly as the run would.
 */
export function maskedEnv(names: Iterable<string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) env[name] = `[env:${name}]`;
  return env;
}

/**
 * What `{{retrieval}}` shows where no search is made (render, a run's messages read back): the
 * knowledge base and the query the run searches (docs/KNOWLEDGE.md "In prompts").
 */
export function retrievalPreview(
  spec: NonNullable<PromptDefinition["retrieval"]> | undefined,
  inputs: Record<string, unknown>,
): string | undefined {
  if (!spec) return undefined;
  return `[retrieval: knowledge base '${spec.knowledgeBase}', query ${JSON.stringify(renderTemplate(spec.query, inputs, {}))}]`;
}
