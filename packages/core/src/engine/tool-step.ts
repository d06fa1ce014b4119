/**
 * The tool calls of one step (docs/TOOLS.md "The loop"): parsed and checked as the model sent
 * them (an unknown tool, arguments that are not a JSON object or do not fit the tool's
 * parameters become error results the model sees, executed by nobody), server tools (http, mcp)
 * run in parallel, and what is left is for the caller (function tools).
 */
import type { ToolCall, ToolResult } from "@promptrun/contract";
import type { RunStepRecord } from "../ports.ts";
import { keptToolOutput, type RunTools } from "../tools/index.ts";
import type { RequestedToolCall } from "./model-step.ts";
import { unansweredCalls } from "./run-steps.ts";

const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const serverResult = (call: ToolCall, output: unknown, isError: boolean): ToolResult => ({
  toolCallId: call.id,
  name: call.name,
  output: keptToolOutput(output),
  isError,
  executedBy: "server",
});

/**
 * The step's calls with their arguments parsed, and the results of those that cannot run: the
 * model hears why at its next call instead of the run failing.
 */
export function checkToolCalls(
  requested: readonly RequestedToolCall[],
  tools: RunTools | null,
): { calls: ToolCall[]; refused: ToolResult[] } {
  const calls: ToolCall[] = [];
  const refused: ToolResult[] = [];
  for (const { id, name, input } of requested) {
    let parsed: unknown;
    try {
      parsed = input.trim() === "" ? {} : JSON.parse(input);
    } catch {
      parsed = undefined;
    }
    const call: ToolCall = { id, name, arguments: isJsonObject(parsed) ? parsed : {} };
    calls.push(call);
    if (!tools || tools.kindOf(name) === null) {
      refused.push(serverResult(call, `the prompt has no tool named '${name}'`, true));
    } else if (!isJsonObject(parsed)) {
      refused.push(serverResult(call, "the arguments are not a JSON object", true));
    } else {
      const problem = tools.checkArguments(name, parsed);
      if (problem !== null) refused.push(serverResult(call, problem, true));
    }
  }
  return { calls, refused };
}

/** The step's unanswered calls that the server runs (http, mcp, knowledge_base). */
export const serverCallsOf = (step: RunStepRecord, tools: RunTools): ToolCall[] =>
  unansweredCalls(step).filter((call) => {
    const kind = tools.kindOf(call.name);
    return kind === "http" || kind === "mcp" || kind === "knowledge_base";
  });

/** The step's unanswered calls that the caller answers (function tools). */
export const clientCallsOf = (step: RunStepRecord, tools: RunTools | null): ToolCall[] =>
  tools ? unansweredCalls(step).filter((call) => tools.kindOf(call.name) === "function") : [];

/** Runs server calls in parallel; each ends in a result (a failure is an error result). */
export async function runServerCalls(
  calls: readonly ToolCall[],
  tools: RunTools,
  signal: AbortSignal,
): Promise<ToolResult[]> {
  return Promise.all(
    calls.map(async (call) => {
      try {
        const execution = await tools.execute(call, signal);
        return serverResult(call, execution.output, execution.isError);
      } catch (error) {
        // execute() reports failures as results; a throw is a bug there, still not the run's end.
        return serverResult(
          call,
          `tool failed: ${error instanceof Error ? error.message : String(error)}`,
          true,
        );
      }
    }),
  );
}
