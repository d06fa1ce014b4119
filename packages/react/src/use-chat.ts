import type {
  Cost,
  FinishReason,
  PromptRun,
  RunMemory,
  StreamTokenResponse,
  TokenUsage,
} from "@promptrun/contract";
import { useQueries } from "@tanstack/react-query";
import { useCallback, useRef, useState } from "react";
import { newThreadId } from "./new-thread-id.ts";
import { usePromptrunBackend } from "./promptrun-provider.tsx";
import { runQueryKey } from "./run-query-key.ts";
import type { RunStreamState } from "./thread-state.ts";
import { type ChatRunVariables, useCreateRun } from "./use-create-run.ts";
import { type ThreadStream, useThreadStream } from "./use-thread-stream.ts";

/** One message of a chat: the user's, or the assistant's answer (a run). */
export type ChatMessage =
  | { id: string; role: "user"; content: string }
  | {
      id: string;
      role: "assistant";
      runId: string | null;
      content: string;
      /** `pending` until the run starts streaming. */
      status: "pending" | "streaming" | "completed" | "failed";
      tokenUsage: TokenUsage | null;
      cost: Cost | null;
      /** The parsed JSON answer when the prompt has an output schema; null otherwise and until completed. */
      outputJson: unknown;
      /** Why the model stopped (`stop`, `length`, …); null until completed. */
      finishReason: FinishReason | null;
      /** Thread history the run carried and left out; null until it ends. */
      memory: RunMemory | null;
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
}

/** What {@link useChat} returns. */
export interface Chat {
  thread: string;
  messages: ChatMessage[];
  /** Sends a message: waits for the stream to be live, then starts the run. */
  send(message: string): Promise<void>;
  /** True while an answer is pending or streaming. */
  isBusy: boolean;
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

type Answer = Omit<Extract<ChatMessage, { role: "assistant" }>, "id" | "role" | "runId">;

const fromStream = (run: RunStreamState): Answer => ({
  content: run.text,
  status: run.status,
  tokenUsage: run.tokenUsage,
  cost: run.cost,
  outputJson: run.outputJson,
  finishReason: run.finishReason,
  memory: run.memory,
  error: run.error,
});

const fromRun = (run: PromptRun): Answer => ({
  content: run.output ?? "",
  status: run.status === "pending" ? ("pending" as const) : run.status,
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
  tokenUsage: null,
  cost: null,
  outputJson: null,
  finishReason: null,
  memory: null,
  error,
});

/**
 * A chat on one thread: create + stream combined. Messages keep their order; each answer shows
 * its tokens as they arrive, then its usage and cost. If the stream is down, answers are polled.
 */
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

  const messages = turns.flatMap((turn): ChatMessage[] => {
    const streamed = turn.runId ? stream.runs[turn.runId] : undefined;
    const fetched = turn.runId ? polledById.get(turn.runId) : undefined;
    const answer =
      streamed && (streamed.status !== "streaming" || !fetched || fetched.status === "pending")
        ? fromStream(streamed)
        : fetched
          ? fromRun(fetched)
          : noAnswer(turn.error);
    return [
      { id: `${turn.id}:user`, role: "user", content: turn.message },
      { id: `${turn.id}:assistant`, role: "assistant", runId: turn.runId, ...answer },
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
      message.role === "assistant" && (message.status === "pending" || message.status === "streaming"),
  );
  return { thread, messages, send, isBusy, stream, newThread };
}
