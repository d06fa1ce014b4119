/**
 * Thread memory is read bounded (docs/PRODUCT-RULES.md "Thread memory"): the newest whole
 * exchanges of a channel, at most `maxMessages` messages, `maxBytes` UTF-8 bytes (content and
 * parts) and, when given, `maxTokens` estimated tokens, returned oldest first. Each store reads
 * only the sizes of the newest `maxMessages + 1` rows (its messages index, newest first), picks
 * the window with `memoryWindowOf`, reads the contents from there on, and counts the channel's
 * messages (one indexed count) only when the sizes it read were not all of them.
 */
import type { ChatMessage, MemorySpec, PromptDefinition, PromptMessage } from "@promptrun/contract";
import { parseModelRef } from "./models/model-ref.ts";
import type { MemoryMessage, RunRecord, RunStore, ThreadMemory } from "./ports.ts";

export interface MemoryBound {
  maxMessages: number;
  maxBytes: number;
  /** Estimated tokens of history (`estimateTokens` of each message's text); absent: no limit. */
  maxTokens?: number | undefined;
}

/** 1,000 messages / 2 MiB: far above a model's context, far below what slows a run's start. */
export const DEFAULT_MEMORY_BOUND: MemoryBound = { maxMessages: 1_000, maxBytes: 2 * 1024 * 1024 };

export interface MemoryRowSize {
  /** Insertion order within the channel. */
  seq: number;
  /**
   * The run whose exchange the row belongs to (an exchange's rows are contiguous); null for an
   * imported message, which is a unit of its own (docs/PRODUCT-RULES.md "Thread memory").
   */
  runId: string | null;
  /** UTF-8 bytes of its content (its text). */
  bytes: number;
  /** UTF-8 bytes of its parts' JSON; 0 (or absent) for a text-only message. */
  partsBytes?: number | undefined;
}

/** The token estimate of a text: one token per 4 UTF-8 bytes, rounded up. */
export const tokensOfBytes = (bytes: number): number => Math.ceil(bytes / 4);

/** Estimated tokens of a message: its text, and the JSON of its tool calls and results. */
export function estimateMessageTokens(message: Pick<ChatMessage, "content">): number {
  if (typeof message.content === "string") return tokensOfBytes(Buffer.byteLength(message.content));
  let bytes = 0;
  for (const part of message.content) {
    if (part.type === "text") bytes += Buffer.byteLength(part.text);
    else if (part.type === "tool-call") bytes += Buffer.byteLength(JSON.stringify(part.arguments));
    else if (part.type === "tool-result") bytes += Buffer.byteLength(JSON.stringify(part.output) ?? "");
  }
  return tokensOfBytes(bytes);
}

/** Where the window starts (null: not even the newest exchange fits) and how many rows it holds. */
export interface MemoryWindowPlan {
  start: number | null;
  messages: number;
}

/**
 * The window over `newestFirst`, which holds at most `maxMessages + 1` rows: an exchange cut off
 * by that limit cannot fit anyway, since counting only its fetched rows already exceeds
 * `maxMessages`.
 */
export function memoryWindowOf(newestFirst: readonly MemoryRowSize[], bound: MemoryBound): MemoryWindowPlan {
  const maxTokens = bound.maxTokens ?? Number.POSITIVE_INFINITY;
  const plan: MemoryWindowPlan = { start: null, messages: 0 };
  let bytes = 0;
  let tokens = 0;
  let index = 0;
  while (index < newestFirst.length) {
    const runId = newestFirst[index]!.runId;
    let groupMessages = 0;
    let groupBytes = 0;
    let groupTokens = 0;
    let groupStart = newestFirst[index]!.seq;
    while (
      index < newestFirst.length &&
      newestFirst[index]!.runId === runId &&
      (runId !== null || groupMessages === 0)
    ) {
      const row = newestFirst[index]!;
      groupMessages++;
      groupBytes += row.bytes + (row.partsBytes ?? 0);
      groupTokens += tokensOfBytes(row.bytes);
      groupStart = row.seq;
      index++;
    }
    if (
      plan.messages + groupMessages > bound.maxMessages ||
      bytes + groupBytes > bound.maxBytes ||
      tokens + groupTokens > maxTokens
    )
      break;
    plan.messages += groupMessages;
    bytes += groupBytes;
    tokens += groupTokens;
    plan.start = groupStart;
  }
  return plan;
}

/**
 * The channel's message count when `newestFirst` (read with LIMIT maxMessages + 1) already holds
 * every row of it; null when there may be more, and the store must count them.
 */
export const knownTotal = (newestFirst: readonly unknown[], bound: MemoryBound): number | null =>
  newestFirst.length <= bound.maxMessages ? newestFirst.length : null;

/**
 * A model's context in tokens when the prompt says nothing (docs/PRODUCT-RULES.md "Thread
 * memory"): per provider, deliberately the common size of its current models; `dev` is
 * unlimited. Any other provider is an OpenAI-compatible endpoint.
 */
export const DEFAULT_CONTEXT_TOKENS: Readonly<Record<string, number | null>> = {
  openai: 128_000,
  anthropic: 200_000,
  dev: null,
};
/** An OpenAI-compatible endpoint (Ollama, vLLM…): a context many local models are served with. */
export const COMPATIBLE_CONTEXT_TOKENS = 32_768;

export const defaultContextTokens = (provider: string): number | null => {
  const known = DEFAULT_CONTEXT_TOKENS[provider];
  return known === undefined ? COMPATIBLE_CONTEXT_TOKENS : known;
};

/**
 * The bound of one run's memory read: the server's bound, narrowed by the prompt's `memory`.
 * Without `memory.maxInputTokens`, history gets what the provider's default context leaves after
 * the prompt's own messages and its `maxOutputTokens`.
 */
export function runMemoryBound(
  server: MemoryBound,
  prompt: { provider: string; memory?: MemorySpec | null | undefined; maxOutputTokens?: number | undefined },
  ownMessages: readonly Pick<PromptMessage, "content">[],
): MemoryBound {
  const memory = prompt.memory ?? {};
  const maxMessages = Math.min(server.maxMessages, memory.maxMessages ?? server.maxMessages);
  let maxTokens = memory.maxInputTokens;
  if (maxTokens === undefined) {
    const context = defaultContextTokens(prompt.provider);
    if (context !== null) {
      const own = ownMessages.reduce((sum, message) => sum + estimateMessageTokens(message), 0);
      maxTokens = Math.max(0, context - own - (prompt.maxOutputTokens ?? 0));
    }
  }
  if (server.maxTokens !== undefined) maxTokens = Math.min(server.maxTokens, maxTokens ?? server.maxTokens);
  return { maxMessages, maxBytes: server.maxBytes, ...(maxTokens === undefined ? {} : { maxTokens }) };
}

/** The text of a message's content: the string, or its text parts joined by newlines. */
export const textOfContent = (content: ChatMessage["content"]): string =>
  typeof content === "string"
    ? content
    : content
        .filter((part) => part.type === "text")
        .map((part) => part.text)
        .join("\n");

/** A rendered user/assistant message as a memory row: a message of parts keeps them. */
export const memoryMessageOf = (message: PromptMessage & { role: "user" | "assistant" }): MemoryMessage =>
  typeof message.content === "string"
    ? { role: message.role, content: message.content }
    : { role: message.role, content: textOfContent(message.content), parts: message.content };

/** A memory row as the model gets it again: its parts when it has them, else its text. */
export const promptMessageOfMemory = (message: MemoryMessage): ChatMessage => ({
  role: message.role,
  content: message.parts && message.parts.length > 0 ? message.parts : message.content,
});

/** Reads a run's memory within the server's bound narrowed by its prompt (`runMemoryBound`). */
export function readRunMemory(
  runs: Pick<RunStore, "memory">,
  run: Pick<RunRecord, "tenantId" | "threadId" | "channel">,
  serverBound: MemoryBound,
  definition: Pick<PromptDefinition, "model" | "memory" | "params">,
  rendered: readonly Pick<PromptMessage, "content">[],
): Promise<ThreadMemory> {
  const prompt = {
    provider: parseModelRef(definition.model).provider,
    memory: definition.memory,
    maxOutputTokens: definition.params.maxOutputTokens,
  };
  return runs.memory(run.tenantId, run.threadId, run.channel, runMemoryBound(serverBound, prompt, rendered));
}
