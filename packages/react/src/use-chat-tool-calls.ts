import type { ToolOutput } from "@promptrun/client";
import type { RequiredAction, ToolCall } from "@promptrun/contract";
import { useCallback, useEffect, useRef, useState } from "react";
import type { PromptrunBackend } from "./backend.ts";

/** A client tool call a paused run of the chat waits for. */
export interface PendingToolCall extends ToolCall {
  /** The run that asked for it. */
  runId: string;
}

/**
 * Answers a client tool call in the browser. Its return value (or resolved value) is the
 * output, any JSON value (`undefined` is sent as `null`); a throw is sent as `{error: message}`.
 */
export type OnToolCall = (toolCall: ToolCall, run: { id: string }) => unknown;

/** A paused run of the chat: what it waits for, keyed by run and pause. */
export interface ChatPause {
  runId: string;
  requiredAction: RequiredAction;
}

interface ToolCallsState {
  pendingToolCalls: PendingToolCall[];
  /** Outputs this chat submitted, by toolCallId (a tool-result event carries none). */
  outputs: Record<string, unknown>;
  /** Why a run's outputs could not be submitted through onToolCall, by run id. */
  errors: Record<string, string>;
  submitToolOutputs(toolOutputs: ToolOutput[]): Promise<void>;
}

/** A pause is its run and its expiry: a run that pauses again later is another pause. */
const keyOf = (pause: ChatPause) => `${pause.runId}:${pause.requiredAction.expiresAt}`;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The output of one call through onToolCall: its value (`null` for none), or the error it threw. */
async function outputOf(onToolCall: OnToolCall, call: ToolCall, runId: string): Promise<unknown> {
  try {
    const output = await onToolCall(
      { id: call.id, name: call.name, arguments: call.arguments },
      { id: runId },
    );
    return output === undefined ? null : output;
  } catch (error) {
    return { error: messageOf(error) };
  }
}

/**
 * The chat's side of paused runs (docs/react.md "Tools"): with `onToolCall`, every call of a
 * pause is answered in the browser and the outputs submitted together through the backend, once
 * per pause; without it, the calls are listed as pending until `submitToolOutputs` answers them.
 */
export function useChatToolCalls(
  backend: PromptrunBackend,
  pauses: ChatPause[],
  onToolCall: OnToolCall | undefined,
): ToolCallsState {
  const [submitted, setSubmitted] = useState<ReadonlySet<string>>(() => new Set());
  const [outputs, setOutputs] = useState<Record<string, unknown>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  // Pauses onToolCall is working on: never answered twice, even across renders.
  const inFlight = useRef(new Set<string>());
  const latest = useRef({ pauses, submitted, onToolCall });
  latest.current = { pauses, submitted, onToolCall };

  const submit = useCallback(
    async (pause: ChatPause, toolOutputs: ToolOutput[]) => {
      if (!backend.submitToolOutputs)
        throw new Error("the Promptrun backend has no submitToolOutputs: it cannot answer tool calls");
      await backend.submitToolOutputs(pause.runId, toolOutputs);
      const key = keyOf(pause);
      setSubmitted((current) => new Set([...current, key]));
      setOutputs((current) => ({
        ...current,
        ...Object.fromEntries(toolOutputs.map((entry) => [entry.toolCallId, entry.output])),
      }));
    },
    [backend],
  );

  const waiting = pauses.filter((pause) => !submitted.has(keyOf(pause)));
  const signature = waiting.map(keyOf).join(" ");
  useEffect(() => {
    const { onToolCall: answer, pauses: current, submitted: done } = latest.current;
    if (!answer || signature === "") return;
    for (const pause of current) {
      const key = keyOf(pause);
      if (done.has(key) || inFlight.current.has(key)) continue;
      inFlight.current.add(key);
      void (async () => {
        const calls = pause.requiredAction.toolCalls;
        const values = await Promise.all(calls.map((call) => outputOf(answer, call, pause.runId)));
        try {
          await submit(
            pause,
            calls.map((call, index) => ({ toolCallId: call.id, output: values[index] })),
          );
        } catch (error) {
          setErrors((currentErrors) => ({ ...currentErrors, [pause.runId]: messageOf(error) }));
        }
      })();
    }
  }, [signature, submit]);

  const submitToolOutputs = useCallback(
    async (toolOutputs: ToolOutput[]) => {
      const ids = new Set(toolOutputs.map((entry) => entry.toolCallId));
      const pause = latest.current.pauses.find(
        (candidate) =>
          !latest.current.submitted.has(keyOf(candidate)) &&
          candidate.requiredAction.toolCalls.some((call) => ids.has(call.id)),
      );
      if (!pause) throw new Error(`no pending tool call with id ${[...ids].join(", ")}`);
      await submit(pause, toolOutputs);
    },
    [submit],
  );

  const pendingToolCalls = waiting.flatMap((pause) =>
    pause.requiredAction.toolCalls.map((call) => ({ ...call, runId: pause.runId })),
  );
  return { pendingToolCalls, outputs, errors, submitToolOutputs };
}
