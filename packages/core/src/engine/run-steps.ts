/**
 * A run's steps (docs/TOOLS.md "Steps"): one per model call that answered, stored on the run so a
 * restart never sends a finished step to the model again. Pure bookkeeping: what the steps add up
 * to (usage, cost, token index, attempts), what they still wait for, and how they read back as
 * messages for the next model call and as rows of the thread's memory.
 */
import type {
  ChatMessage,
  Cost,
  CostBlock,
  MemoryPart,
  TokenUsage,
  ToolCall,
  ToolResult,
} from "@promptrun/contract";
import type { MemoryMessage, RunStepRecord } from "../ports.ts";
import { buildCost, sumCostBlocks } from "../pricing/cost.ts";

export const ZERO_USAGE: TokenUsage = { input: 0, inputCached: 0, output: 0, reasoning: 0, total: 0 };

export function sumUsage(usages: readonly TokenUsage[]): TokenUsage {
  const sum = { ...ZERO_USAGE };
  for (const usage of usages) {
    sum.input += usage.input;
    sum.inputCached += usage.inputCached;
    sum.output += usage.output;
    sum.reasoning += usage.reasoning;
    sum.total += usage.total;
  }
  return sum;
}

/** The run's cost: every step's successful attempt under success, every failed attempt under retries. */
export const runCostOf = (
  steps: readonly RunStepRecord[],
  unfinishedRetries: readonly CostBlock[] = [],
): Cost =>
  buildCost(
    sumCostBlocks(steps.map((step) => step.cost.success)),
    sumCostBlocks([...steps.map((step) => step.cost.retries), ...unfinishedRetries]),
  );

/** run.token events the steps sent: the next step's first index. */
export const tokensOf = (steps: readonly RunStepRecord[]): number =>
  steps.reduce((sum, step) => sum + step.tokens, 0);

/** Provider attempts the steps took (the current step's attempts are the run's beyond these). */
export const attemptsOf = (steps: readonly RunStepRecord[]): number =>
  steps.reduce((sum, step) => sum + step.attempts, 0);

/** The step's tool calls that have no result yet, in the model's order. */
export const unansweredCalls = (step: RunStepRecord): ToolCall[] => {
  const answered = new Set(step.toolResults.map((result) => result.toolCallId));
  return step.toolCalls.filter((call) => !answered.has(call.id));
};

/** The step with more results; kept in the order of its calls. */
export function withResults(step: RunStepRecord, results: readonly ToolResult[]): RunStepRecord {
  const all = [...step.toolResults, ...results];
  const order = new Map(step.toolCalls.map((call, index) => [call.id, index]));
  all.sort((a, b) => (order.get(a.toolCallId) ?? 0) - (order.get(b.toolCallId) ?? 0));
  return { ...step, toolResults: all };
}

/** Replaces the last step. */
export const withLastStep = (steps: readonly RunStepRecord[], last: RunStepRecord): RunStepRecord[] => [
  ...steps.slice(0, -1),
  last,
];

/** A result's text for a memory row's `content` (what the memory window's estimate counts). */
const resultText = (result: ToolResult): string =>
  typeof result.output === "string" ? result.output : (JSON.stringify(result.output) ?? "");

/**
 * What one step adds to the conversation: the assistant's message (its text, and its tool calls
 * as parts), then, when it called tools, one `tool` message with their results.
 */
export function stepMemoryRows(step: RunStepRecord): MemoryMessage[] {
  if (step.toolCalls.length === 0) return [{ role: "assistant", content: step.text }];
  const callParts: MemoryPart[] = step.toolCalls.map((call) => ({
    type: "tool-call",
    toolCallId: call.id,
    name: call.name,
    arguments: call.arguments,
  }));
  const assistant: MemoryMessage = {
    role: "assistant",
    content: step.text,
    parts: step.text ? [{ type: "text", text: step.text }, ...callParts] : callParts,
  };
  if (step.toolResults.length === 0) return [assistant];
  const tool: MemoryMessage = {
    role: "tool",
    content: step.toolResults.map(resultText).join("\n"),
    parts: step.toolResults.map((result) => ({
      type: "tool-result",
      toolCallId: result.toolCallId,
      name: result.name,
      output: result.output,
      isError: result.isError,
    })),
  };
  return [assistant, tool];
}

/** The steps as messages for the next model call (after the prompt's messages). */
export const stepMessages = (steps: readonly RunStepRecord[]): ChatMessage[] =>
  steps.flatMap(stepMemoryRows).map((row) => ({
    role: row.role,
    content: row.parts && row.parts.length > 0 ? row.parts : row.content,
  }));
