import type { ProviderMetadata, UIMessage } from "ai";
import type { ToolOutput } from "../promptrun-client.ts";

/**
 * The provider-metadata key under which a client tool call's UI part keeps the run that waits
 * for it (`callProviderMetadata.promptrun.runId`): it travels with the message, so the outputs
 * reach the right run even after the app stored and reloaded its messages.
 */
const METADATA_KEY = "promptrun";

/** The `providerMetadata` of a `tool-input-available` chunk for a call `runId` waits for. */
export const pausedCallMetadata = (runId: string): ProviderMetadata => ({ [METADATA_KEY]: { runId } });

/** The fields of a tool UI part (`tool-<name>` or `dynamic-tool`) this module reads. */
interface ToolPart {
  type: string;
  toolCallId: string;
  state: string;
  output?: unknown;
  errorText?: string;
  providerExecuted?: boolean;
  callProviderMetadata?: ProviderMetadata;
}

const isToolPart = (part: { type: string }): part is ToolPart =>
  part.type === "dynamic-tool" || part.type.startsWith("tool-");

const runIdOf = (part: ToolPart): string | undefined => {
  const runId = part.callProviderMetadata?.[METADATA_KEY]?.runId;
  return typeof runId === "string" ? runId : undefined;
};

/** A paused run whose client tool calls the conversation has answered. */
export interface AnsweredPause {
  runId: string;
  toolOutputs: ToolOutput[];
  /** Calls of the pause still without an output (the outputs cannot be submitted yet). */
  unanswered: string[];
}

/** What a tool part's state gives the run: its output, or `{error}` for an error (as React's useChat does). */
const outputOf = (part: ToolPart): unknown =>
  part.state === "output-error" ? { error: part.errorText ?? "tool failed" } : (part.output ?? null);

/**
 * The pause answered by the conversation's last message, if any: the client tool calls of its
 * last step (after its last `step-start`, as the AI SDK's `lastAssistantMessageIsCompleteWithToolCalls`
 * reads it) that a Promptrun run waits for. Null when the last message is not such an answer:
 * then the request is a new message, not a continuation.
 */
export function answeredPauseOf(messages: readonly UIMessage[]): AnsweredPause | null {
  const last = messages.at(-1);
  if (last?.role !== "assistant") return null;
  const stepStart = last.parts.findLastIndex((part) => part.type === "step-start");
  // The part types the app declares are its own: read the parts by their shape.
  const lastStep: ReadonlyArray<{ type: string }> = last.parts.slice(stepStart + 1);
  const calls = lastStep
    .filter(isToolPart)
    .filter((part) => !part.providerExecuted && runIdOf(part) !== undefined);
  const runId = calls.length > 0 ? runIdOf(calls[calls.length - 1] as ToolPart) : undefined;
  if (runId === undefined) return null;
  const ofRun = calls.filter((part) => runIdOf(part) === runId);
  const answered = ofRun.filter((part) => part.state === "output-available" || part.state === "output-error");
  return {
    runId,
    toolOutputs: answered.map((part) => ({ toolCallId: part.toolCallId, output: outputOf(part) })),
    unanswered: ofRun.filter((part) => !answered.includes(part)).map((part) => part.toolCallId),
  };
}
