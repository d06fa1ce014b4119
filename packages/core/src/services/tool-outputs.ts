/**
 * The checks and the bookkeeping of a tool-outputs submission (docs/PRODUCT-RULES.md "Tool
 * outputs"): the body on its own, the run's state, the ids against the pause, and the steps the
 * answered pause leaves behind.
 */
import {
  type SubmitToolOutputsRequest,
  submitToolOutputsRequestSchema,
  TOOL_OUTPUT_MAX_BYTES,
  TOOL_RESULT_KEPT_BYTES,
  type ToolResult,
} from "@promptrun/contract";
import { invalid } from "../errors.ts";
import type { RunPause, RunRecord, RunStepRecord } from "../ports.ts";
import { formatValidationError } from "./format-validation-error.ts";
import { toPromptRun } from "./to-prompt-run.ts";

const TRUNCATED = "…[truncated]";

/** UTF-8 bytes of an output: of the string itself, else of its JSON. */
const outputBytes = (output: unknown): number =>
  Buffer.byteLength(typeof output === "string" ? output : (JSON.stringify(output) ?? ""), "utf8");

/** The first `limit` bytes of `text`, never splitting a character. */
function cutUtf8(text: string, limit: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= limit) return text;
  let end = limit;
  // Back off from a continuation byte (10xxxxxx) to the start of its character.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8");
}

/**
 * What a run keeps of a tool output (and sends to the model): the output itself up to
 * TOOL_RESULT_KEPT_BYTES; a longer one becomes its text (JSON when not a string), cut to fit
 * with `…[truncated]` at the end.
 */
export function keptToolOutput(output: unknown): unknown {
  if (outputBytes(output) <= TOOL_RESULT_KEPT_BYTES) return output;
  const text = typeof output === "string" ? output : (JSON.stringify(output) ?? "");
  return cutUtf8(text, TOOL_RESULT_KEPT_BYTES - Buffer.byteLength(TRUNCATED, "utf8")) + TRUNCATED;
}

/**
 * The body on its own (400 naming the field): the contract's schema, every entry with an output,
 * no toolCallId twice, no output over TOOL_OUTPUT_MAX_BYTES.
 */
export function checkToolOutputsBody(body: unknown): SubmitToolOutputsRequest {
  const parsed = submitToolOutputsRequestSchema.safeParse(body);
  if (!parsed.success) throw invalid(formatValidationError(parsed.error));
  const seen = new Set<string>();
  parsed.data.toolOutputs.forEach(({ toolCallId, output }, index) => {
    const where = `toolOutputs[${index}]`;
    // `unknown` admits a missing key; an output is required (null is a value).
    if (output === undefined) throw invalid(`${where}.output: required (a string or any JSON value)`);
    if (seen.has(toolCallId)) throw invalid(`${where}.toolCallId: '${toolCallId}' is repeated`);
    seen.add(toolCallId);
    const bytes = outputBytes(output);
    if (bytes > TOOL_OUTPUT_MAX_BYTES)
      throw invalid(
        `${where}.output: ${bytes} bytes; at most ${TOOL_OUTPUT_MAX_BYTES} bytes are allowed (UTF-8, its JSON when not a string)`,
      );
  });
  return parsed.data;
}

/**
 * Why `run` cannot take tool outputs now (the 409's message), or null when it waits for them:
 * not pending or not paused names its status and phase; a pause past its expiry says so.
 */
export function notWaitingReason(run: RunRecord, now: Date): string | null {
  if (run.status !== "pending") return `run is ${run.status}, not waiting for tool outputs`;
  if (run.pause === null)
    return `run is pending (phase ${toPromptRun(run).phase}), not waiting for tool outputs`;
  if (run.pause.expiresAt.getTime() <= now.getTime())
    return `tool outputs were not submitted before ${run.pause.expiresAt.toISOString()}`;
  return null;
}

/** The ids against the pause (400): none the run did not ask for, none of its calls left out. */
export function checkOutputsAnswerPause(pause: RunPause, request: SubmitToolOutputsRequest): void {
  const asked = new Set(pause.requiredAction.toolCalls.map((call) => call.id));
  request.toolOutputs.forEach(({ toolCallId }, index) => {
    if (!asked.has(toolCallId))
      throw invalid(`toolOutputs[${index}].toolCallId: '${toolCallId}' is not a tool call the run waits for`);
  });
  const answered = new Set(request.toolOutputs.map((entry) => entry.toolCallId));
  const missing = pause.requiredAction.toolCalls.filter((call) => !answered.has(call.id));
  if (missing.length > 0)
    throw invalid(
      `toolOutputs: no output for ${missing.map((call) => `'${call.id}' (${call.name})`).join(", ")}`,
    );
}

/**
 * The run's steps with the paused step's results completed: one client result per call of the
 * pause, in the order the model asked for them, each output as kept (keptToolOutput).
 */
export function stepsWithToolOutputs(
  steps: RunStepRecord[],
  pause: RunPause,
  request: SubmitToolOutputsRequest,
): RunStepRecord[] {
  const outputs = new Map(request.toolOutputs.map((entry) => [entry.toolCallId, entry.output]));
  const results: ToolResult[] = pause.requiredAction.toolCalls.map((call) => ({
    toolCallId: call.id,
    name: call.name,
    output: keptToolOutput(outputs.get(call.id)),
    isError: false,
    executedBy: "client",
  }));
  if (!steps.some((step) => step.index === pause.step))
    throw new Error(`paused step ${pause.step} is not among the run's steps`);
  return steps.map((step) =>
    step.index === pause.step ? { ...step, toolResults: [...step.toolResults, ...results] } : step,
  );
}
