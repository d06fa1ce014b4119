import type { ToolOutput } from "@promptrun/client";
import type {
  Cost,
  FinishReason,
  PromptRun,
  RequiredAction,
  RunMemory,
  StreamTokenResponse,
  TokenUsage,
} from "@promptrun/contract";
import { useQueries } from "@tanstack/react-query";
import { useCallback, useRef, useState } from "react";
import { newThreadId } from "./new-thread-id.ts";
import { usePromptrunBackend } from "./promptrun-provider.tsx";
import { runQueryKey } from "./run-query-key.ts";
import type { RunPart, RunStreamState, ToolCallState } from "./thread-state.ts";
import {
  type ChatPause,
  type OnToolCall,
  type PendingToolCall,
  useChatToolCalls,
} from "./use-chat-tool-calls.ts";
import { type ChatRunVariables, useCreateRun } from "./use-create-run.ts";
import { type ThreadStream, useThreadStream } from "./use-thread-stream.ts";

export type { OnToolCall, PendingToolCall } from "./use-chat-tool-calls.ts";

/** A tool call of an answer, with its output when the chat knows it (submitted here, or read from the run). */
export type ChatToolCallPart = Extract<RunPart, { type: "tool-call" }> & { output?: unknown };

/** What an answer is made of, in order: each model call's text and the tool calls it made. */
export type ChatPart = Extract<RunPart, { type: "text" }> | ChatToolCallPart;

/** One message of a chat: the user's, or the assistant's answer (a run). */
export type ChatMessage =
  | { id: string; role: "user"; content: string }
  | {
      id: string;
      role: "assistant";
      runId: string | null;
      /** The answer's text (its last model call's, the run's output once completed). */
      content: string;
      /**
       * `pending` until the run starts streaming; `requires_action` while it waits for the outputs
       * of client tool calls (`pendingToolCalls`).
       */
      status: "pending" | "streaming" | "requires_action" | "completed" | "failed";
      /** Text and tool calls in order, to render a run that used tools. */
      parts: ChatPart[];
      tokenUsage: TokenUsage | null;
      cost: Cost | null;
      /** The parsed JSON answer when the prompt has an output schema; null otherwise and until completed. */
      outputJson: unknown;
      /** Why the model stopped (`stop`, `length`, …); null until completed. */
      finishReason: FinishReason | null;
      /** Thread history the run carried and left out; null until it ends. */
      memory: RunMemory | null;
      /** The run's error; or, while it waits, why onToolCall's outputs could not be submitted. */
      error: string | null;
    };

/** Options of {@link useChat}. */
export interface UseChatOptions {
  /** Continue this thread (default: a new one). */
  thread?: string;
  /** Memory channel (default: the server's `default`). */
  channel?: string;
  /** Turns a message into the body of the backend's create-run route (default `{thread, channel, message}`). */
  toVariables?: (message: string, context: { thread: string; channel: string | undefined }) => unknown;
  getToken?: (thread: string) => Promise<string | StreamTokenResponse>;
  streamUrl?: string;
  /** How long `send` waits for the stream to be live before starting the run anyway (default 10 s). */
  openTimeoutMs?: number;
  /** Poll interval for answers while the stream is down, in ms (default 2000). */
  fallbackPollMs?: number;
  /**
   * Answers the client tool calls of this chat's runs in the browser: called for each call when a
   * run pauses (`run.requires_action`); the outputs are submitted together through the backend
   * (`submitToolOutputs`). A throw is submitted as `{error: message}`. Without it, paused calls
   * wait in `pendingToolCalls` for `submitToolOutputs` (e.g. a person's answer).
   */
  onToolCall?: OnToolCall;
}

/** What {@link useChat} returns. */
export interface Chat {
  thread: string;
  messages: ChatMessage[];
  /** Sends a message: waits for the stream to be live, then starts the run. */
  send(message: string): Promise<void>;
  /** True while an answer is pending, streaming or waiting for tool outputs. */
  isBusy: boolean;
  /** Client tool calls the chat's paused runs wait for, until their outputs are submitted. */
  pendingToolCalls: PendingToolCall[];
  /**
   * Submits outputs for the pending calls of one paused run (one per call, all at once) through
   * the backend; rejects with the backend's error (e.g. 409 once the pause expired).
   */
  submitToolOutputs(toolOutputs: ToolOutput[]): Promise<void>;
  /** The underlying subscription (status, error, runs). */
  stream: ThreadStream;
  /** Starts over on a new thread (the server-side memory of the old one is kept). */
  newThread(): void;
}

interface Turn {
  id: string;
  message: string;
  runId: string | null;
  error: string | null;
}

type Answer = Omit<Extract<ChatMessage, { role: "assistant" }>, "id" | "role" | "runId"> & {
  requiredAction: RequiredAction | null;
};

const fromStream = (run: RunStreamState): Answer => ({
  content: run.text,
  status: run.status,
  parts: run.parts,
  requiredAction: run.requiredAction,
  tokenUsage: run.tokenUsage,
  cost: run.cost,
  outputJson: run.outputJson,
  finishReason: run.finishReason,
  memory: run.memory,
  error: run.error,
});

/** The parts of a run read from the API: its steps' text, calls and stored results. */
function partsOfSteps(run: PromptRun): ChatPart[] {
  const awaited = new Set(run.requiredAction?.toolCalls.map((call) => call.id) ?? []);
  return run.steps.flatMap((step): ChatPart[] => [
    ...(step.text === "" ? [] : [{ type: "text" as const, step: step.index, text: step.text }]),
    ...step.toolCalls.map((call): ChatPart => {
      const result = step.toolResults.find((each) => each.toolCallId === call.id);
      const state: ToolCallState = result
        ? result.isError
          ? "error"
          : "done"
        : awaited.has(call.id)
          ? "awaiting-output"
          : "running";
      const part = { type: "tool-call" as const, step: step.index, toolCallId: call.id, name: call.name };
      return { ...part, arguments: call.arguments, state, ...(result ? { output: result.output } : {}) };
    }),
  ]);
}

const polledStatus = (run: PromptRun): Answer["status"] =>
  run.status !== "pending" ? run.status : run.phase === "requires_action" ? "requires_action" : "pending";

const fromRun = (run: PromptRun): Answer => ({
  content: run.status === "pending" ? (run.steps.at(-1)?.text ?? "") : (run.output ?? ""),
  status: polledStatus(run),
  parts: partsOfSteps(run),
  requiredAction: run.status === "pending" ? run.requiredAction : null,
  tokenUsage: run.tokenUsage,
  cost: run.cost,
  outputJson: run.outputJson ?? null,
  finishReason: run.finishReason ?? null,
  memory: run.memory ?? null,
  error: run.error,
});

/** An answer with nothing known yet: pending, or failed with the backend's message. */
const noAnswer = (error: string | null): Answer => ({
  content: "",
  status: error ? "failed" : "pending",
  parts: [],
  requiredAction: null,
  tokenUsage: null,
  cost: null,
  outputJson: null,
  finishReason: null,
  memory: null,
  error,
});

/** An output the chat submitted shown on its call (a tool-result event carries none). */
const withOutputs = (parts: ChatPart[], outputs: Record<string, unknown>): ChatPart[] =>
  parts.map((part) =>
    part.type === "tool-call" && !("output" in part) && Object.hasOwn(outputs, part.toolCallId)
      ? { ...part, output: outputs[part.toolCallId] }
      : part,
  );

/**
 * A chat on one thread: create + stream combined. Messages keep their order; each answer shows
 * its tokens as they arrive, then its usage and cost. If the stream is down, answers are polled.
 * Client tool calls of its runs are answered by `onToolCall`, or wait in `pendingToolCalls`.
 */
// long-function: the hook's state, the fallback polling and the message list read as one unit; tools and streaming live in their own hooks.
export function useChat(options: UseChatOptions = {}): Chat {
  const backend = usePromptrunBackend();
  const [thread, setThread] = useState(() => options.thread ?? newThreadId());
  const [turns, setTurns] = useState<Turn[]>([]);
  const stream = useThreadStream(thread, { getToken: options.getToken, streamUrl: options.streamUrl });
  const createRun = useCreateRun<unknown>();
  const optionsRef = useRef(options);
  optionsRef.current = options;

  // Fallback: answers the stream has not finished are polled while it is not live.
  const unfinished = turns.filter(
    (turn) => turn.runId && !["completed", "failed"].includes(stream.runs[turn.runId]?.status ?? ""),
  );
  const polled = useQueries({
    queries: unfinished.map((turn) => ({
      queryKey: runQueryKey(turn.runId!),
      queryFn: ({ signal }: { signal: AbortSignal }) => backend.getRun(turn.runId!, { signal }),
      enabled: stream.status !== "open",
      refetchInterval: (query: { state: { data?: PromptRun } }) =>
        query.state.data?.status === "pending" ? (options.fallbackPollMs ?? 2_000) : false,
    })),
  });
  const polledById = new Map<string, PromptRun>();
  for (const result of polled) if (result.data) polledById.set(result.data.id, result.data);

  const answers = turns.map((turn): Answer => {
    const streamed = turn.runId ? stream.runs[turn.runId] : undefined;
    const fetched = turn.runId ? polledById.get(turn.runId) : undefined;
    return streamed && (streamed.status !== "streaming" || !fetched || fetched.status === "pending")
      ? fromStream(streamed)
      : fetched
        ? fromRun(fetched)
        : noAnswer(turn.error);
  });
  const pauses = turns.flatMap((turn, index): ChatPause[] => {
    const answer = answers[index];
    return turn.runId && answer?.status === "requires_action" && answer.requiredAction
      ? [{ runId: turn.runId, requiredAction: answer.requiredAction }]
      : [];
  });
  const tools = useChatToolCalls(backend, pauses, options.onToolCall);

  const messages = turns.flatMap((turn, index): ChatMessage[] => {
    const { requiredAction: _requiredAction, ...answer } = answers[index] ?? noAnswer(turn.error);
    const toolError = turn.runId && answer.status !== "failed" ? tools.errors[turn.runId] : undefined;
    return [
      { id: `${turn.id}:user`, role: "user", content: turn.message },
      {
        id: `${turn.id}:assistant`,
        role: "assistant",
        runId: turn.runId,
        ...answer,
        parts: withOutputs(answer.parts, tools.outputs),
        error: answer.error ?? toolError ?? null,
      },
    ];
  });

  const send = useCallback(
    async (message: string) => {
      const { channel, toVariables, openTimeoutMs } = optionsRef.current;
      const turnId = newThreadId();
      setTurns((current) => [...current, { id: turnId, message, runId: null, error: null }]);
      const update = (patch: Partial<Turn>) =>
        setTurns((current) => current.map((turn) => (turn.id === turnId ? { ...turn, ...patch } : turn)));
      // Tokens are not replayed to late subscribers: start the run once the stream is live.
      await stream.whenOpen(openTimeoutMs ?? 10_000);
      const variables: unknown = toVariables
        ? toVariables(message, { thread, channel })
        : ({ thread, channel, message } satisfies ChatRunVariables);
      try {
        const created = await createRun.mutateAsync(variables);
        update({ runId: created.id });
      } catch (error) {
        update({ error: error instanceof Error ? error.message : String(error) });
      }
    },
    [thread, stream.whenOpen, createRun.mutateAsync],
  );

  const newThread = useCallback(() => {
    setThread(newThreadId());
    setTurns([]);
  }, []);

  const isBusy = messages.some(
    (message) =>
      message.role === "assistant" &&
      (message.status === "pending" ||
        message.status === "streaming" ||
        message.status === "requires_action"),
  );
  return {
    thread,
    messages,
    send,
    isBusy,
    stream,
    newThread,
    pendingToolCalls: tools.pendingToolCalls,
    submitToolOutputs: tools.submitToolOutputs,
  };
}
