import { ApiError, subscribeToThread } from "@promptrun/client";
import type { StreamEnvelope, StreamTokenResponse } from "@promptrun/contract";
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useReducer, useRef } from "react";
import { onNextFrame } from "./next-frame.ts";
import { usePromptrunBackend } from "./promptrun-provider.tsx";
import { runQueryKey } from "./run-query-key.ts";
import {
  initialThreadStreamState,
  type RunStreamState,
  type ThreadStreamState,
  threadStreamReducer,
} from "./thread-state.ts";

/** Options of {@link useThreadStream}. */
export interface UseThreadStreamOptions {
  /** Mints a stream token (default: the backend's token route). */
  getToken?: (thread: string) => Promise<string | StreamTokenResponse>;
  /** Overrides the stream URL (default: the `url` of the token response). */
  streamUrl?: string;
  /** Set false to stay disconnected (default true). */
  enabled?: boolean;
  /** First reconnect delay in ms (default 500). */
  initialRetryDelayMs?: number;
  /** Reconnect delay ceiling in ms (default 15 000). */
  maxRetryDelayMs?: number;
  /**
   * Called with every event as it arrives (`ready` and `reset` included, before the state
   * folds it): `useWorkflowRun` reads the `workflow.*` events here.
   */
  onEvent?: (envelope: StreamEnvelope) => void;
}

/** What {@link useThreadStream} returns. */
export interface ThreadStream extends ThreadStreamState {
  /** The run that appeared last on the thread, if any. */
  latestRun: RunStreamState | null;
  /** Resolves true when the subscription is live (`ready`); false when it closes or after `timeoutMs`. */
  whenOpen(timeoutMs?: number): Promise<boolean>;
}

/**
 * Subscribes to a thread's live events (fetch-based SSE via @promptrun/client): per-run text,
 * status, usage, cost and error, reconnecting with Last-Event-ID and refreshing the token as
 * needed. Resubscribes when `thread` changes; disconnects on unmount.
 */
export function useThreadStream(
  thread: string | null | undefined,
  options: UseThreadStreamOptions = {},
): ThreadStream {
  const backend = usePromptrunBackend();
  const queryClient = useQueryClient();
  const [state, dispatch] = useReducer(threadStreamReducer, initialThreadStreamState);
  const enabled = (options.enabled ?? true) && Boolean(thread);
  // The latest callbacks without resubscribing when a parent re-renders with new closures.
  const getTokenRef = useRef(options.getToken);
  getTokenRef.current = options.getToken;
  const onEventRef = useRef(options.onEvent);
  onEventRef.current = options.onEvent;
  // Tracked outside React state: `whenOpen` callers must not wait for a render to learn it.
  const live = useRef(false);
  const openWaiters = useRef(new Set<(open: boolean) => void>());
  const { streamUrl, initialRetryDelayMs, maxRetryDelayMs } = options;

  useEffect(() => {
    const settleWaiters = (open: boolean) => {
      live.current = open;
      for (const resolve of openWaiters.current) resolve(open);
      openWaiters.current.clear();
    };
    dispatch({ type: "restart" });
    live.current = false;
    if (!enabled || !thread) {
      dispatch({ type: "connection", status: "closed", error: null });
      settleWaiters(false);
      return;
    }
    const controller = new AbortController();
    // Token events wait for the next animation frame and are folded together: one render per
    // frame, not one per token. Any other event or connection change flushes them first, so
    // order holds and a run's final text (run.completed / run.failed) is never behind.
    const pendingTokens: StreamEnvelope[] = [];
    let cancelFrame: (() => void) | null = null;
    const flushTokens = () => {
      cancelFrame?.();
      cancelFrame = null;
      if (pendingTokens.length > 0) dispatch({ type: "events", envelopes: pendingTokens.splice(0) });
    };
    const events = subscribeToThread({
      url: streamUrl,
      getToken: () => (getTokenRef.current ? getTokenRef.current(thread) : backend.getStreamToken(thread)),
      signal: controller.signal,
      initialRetryDelayMs,
      maxRetryDelayMs,
      onConnectionChange: (change) => {
        if (controller.signal.aborted) return;
        if (change.status !== "open") live.current = false;
        if (change.status === "closed") settleWaiters(false);
        flushTokens();
        dispatch({ type: "connection", status: change.status, error: change.error ?? null });
      },
    });
    void (async () => {
      try {
        for await (const envelope of events) {
          if (controller.signal.aborted) break;
          onEventRef.current?.(envelope);
          if (envelope.type === "run.token") {
            pendingTokens.push(envelope);
            cancelFrame ??= onNextFrame(flushTokens);
            continue;
          }
          flushTokens();
          dispatch({ type: "event", envelope });
          if (envelope.type === "ready") settleWaiters(true);
          // A run that ends or pauses is read again at once (useRun shows phase requires_action).
          if (
            envelope.type === "run.completed" ||
            envelope.type === "run.failed" ||
            envelope.type === "run.requires_action"
          ) {
            void queryClient.invalidateQueries({ queryKey: runQueryKey(envelope.data.runId) });
          }
        }
      } catch (error) {
        // onConnectionChange already reported the final error as "closed".
        if (!ApiError.isInstance(error) && !controller.signal.aborted) {
          flushTokens();
          dispatch({ type: "connection", status: "closed", error: ApiError.network(error) });
        }
      }
    })();
    return () => {
      // Tokens already received still land (a no-op after unmount; before a thread switch's restart).
      flushTokens();
      controller.abort();
    };
  }, [thread, enabled, streamUrl, initialRetryDelayMs, maxRetryDelayMs, backend, queryClient]);

  const whenOpen = useCallback((timeoutMs = 10_000): Promise<boolean> => {
    if (live.current) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (open: boolean) => {
        clearTimeout(timer);
        resolve(open);
      };
      const timer = setTimeout(() => {
        openWaiters.current.delete(done);
        resolve(false);
      }, timeoutMs);
      openWaiters.current.add(done);
    });
  }, []);

  const latestId = state.runIds.at(-1);
  return { ...state, latestRun: latestId ? (state.runs[latestId] ?? null) : null, whenOpen };
}
