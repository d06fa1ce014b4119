import { parseStreamEvent, type StreamEnvelope, type StreamTokenResponse } from "@promptrun/contract";
import { createParser } from "eventsource-parser";
import { ApiError } from "./api-error.ts";
import { backoffDelay, delay } from "./delay.ts";

/** Connection state of a thread subscription, as reported to `onConnectionChange`. */
export type ConnectionStatus = "connecting" | "open" | "reconnecting" | "closed";

/** One report to `onConnectionChange`. */
export interface ConnectionChange {
  status: ConnectionStatus;
  /** Why the subscription is reconnecting or closed, when it failed. */
  error?: ApiError;
  /** Consecutive failed connection attempts so far (0 once a stream is open). */
  failures: number;
}

/** Options of {@link subscribeToThread}. */
export interface SubscribeToThreadOptions {
  /** The stream URL (`{stream_url}/stream/<thread>`); optional when `getToken` returns a StreamTokenResponse. */
  url?: string;
  /** A stream token. Without `getToken`, a rejected or expired token ends the subscription. */
  token?: string;
  /**
   * Mints a fresh token (usually by calling the app's own backend). Called first when no `token`
   * is given, and again when the server answers 401 or ends the stream with `token_expired`.
   */
  getToken?: () => Promise<string | StreamTokenResponse>;
  /** Resume after this event id (sent as `Last-Event-ID`). */
  lastEventId?: string | null;
  /** Aborting ends the iteration quietly. */
  signal?: AbortSignal;
  /** Replaces the global `fetch`. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** First reconnect delay in ms (default 500); doubles per consecutive failure. */
  initialRetryDelayMs?: number;
  /** Ceiling of the reconnect delay in ms (default 15 000). */
  maxRetryDelayMs?: number;
  /** Consecutive failed connection attempts before giving up (default: never give up). */
  maxReconnectAttempts?: number;
  /** Observes connection state changes (for UI status). */
  onConnectionChange?: (change: ConnectionChange) => void;
}

/** A 401 right after a fresh token is a real failure, not an expiry: stop after this many in a row. */
const MAX_CONSECUTIVE_UNAUTHORIZED = 3;

/**
 * Subscribes to a thread's live events over `fetch` + SSE with the `Authorization` header.
 * Reconnects with exponential backoff and `Last-Event-ID` (so nothing is lost across a drop),
 * refreshes the token through `getToken`, and yields every event with its SSE id. Ends quietly
 * when `signal` aborts or the consumer stops iterating; throws {@link ApiError} when the server
 * refuses for good (403, 404, repeated 401, or `maxReconnectAttempts` exhausted).
 */
// long-function: one generator whose loop shares its reconnect state (attempt, Last-Event-ID, token) across yields.
export async function* subscribeToThread(options: SubscribeToThreadOptions): AsyncGenerator<StreamEnvelope> {
  const fetchFunction = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  const initialDelay = options.initialRetryDelayMs ?? 500;
  const maxDelay = options.maxRetryDelayMs ?? 15_000;
  const maxAttempts = options.maxReconnectAttempts ?? Number.POSITIVE_INFINITY;
  const report = options.onConnectionChange ?? (() => {});
  // Our own controller: stopping the iteration must abort the in-flight request too.
  const controller = new AbortController();
  const onOuterAbort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) return;
  options.signal?.addEventListener("abort", onOuterAbort, { once: true });
  const signal = controller.signal;

  let url = options.url;
  let token = options.token;
  let needsToken = token === undefined;
  let lastEventId = options.lastEventId ?? null;
  let failures = 0;
  let unauthorizedInARow = 0;
  let serverRetryMs = 0;
  let finalError: ApiError | undefined;

  const giveUp = (error: ApiError): ApiError => {
    finalError = error;
    return error;
  };
  /** Records a failure and waits before the next attempt; false when aborted meanwhile. */
  const fail = async (error: ApiError): Promise<boolean> => {
    failures += 1;
    if (failures > maxAttempts) throw giveUp(error);
    report({ status: "reconnecting", error, failures });
    const wait = Math.max(serverRetryMs, backoffDelay(failures, initialDelay, maxDelay));
    return delay(wait, signal);
  };

  try {
    report({ status: "connecting", failures });
    while (!signal.aborted) {
      if (needsToken) {
        if (!options.getToken) {
          throw giveUp(
            new ApiError(401, "unauthorized", "the stream token expired and no getToken was given"),
          );
        }
        try {
          const minted = await options.getToken();
          if (typeof minted === "string") token = minted;
          else {
            token = minted.token;
            url = options.url ?? minted.url;
          }
          needsToken = false;
        } catch (error) {
          if (signal.aborted) return;
          const apiError = ApiError.isInstance(error) ? error : ApiError.network(error);
          if (!apiError.isRetryable) throw giveUp(apiError);
          if (!(await fail(apiError))) return;
          continue;
        }
      }
      if (!url)
        throw new TypeError(
          "subscribeToThread needs `url`, or a getToken that returns a StreamTokenResponse",
        );

      const headers: Record<string, string> = {
        accept: "text/event-stream",
        authorization: `Bearer ${token}`,
      };
      if (lastEventId) headers["last-event-id"] = lastEventId;
      let response: Response;
      try {
        response = await fetchFunction(url, { headers, signal, cache: "no-store" });
      } catch (error) {
        if (signal.aborted) return;
        if (!(await fail(ApiError.network(error)))) return;
        continue;
      }

      if (response.status === 401) {
        const error = await ApiError.fromResponse(response);
        unauthorizedInARow += 1;
        if (!options.getToken || unauthorizedInARow > MAX_CONSECUTIVE_UNAUTHORIZED) throw giveUp(error);
        needsToken = true;
        // The first 401 is an ordinary expiry: refresh at once. Repeated ones back off.
        if (unauthorizedInARow > 1 && !(await fail(error))) return;
        continue;
      }
      if (!response.ok || !response.body) {
        const error = await ApiError.fromResponse(response);
        if (!error.isRetryable) throw giveUp(error);
        if (!(await fail(error))) return;
        continue;
      }

      failures = 0;
      report({ status: "open", failures });
      const queue: StreamEnvelope[] = [];
      let invalidEvent: ApiError | undefined;
      let readError: unknown;
      const parser = createParser({
        onEvent(message) {
          if (message.id) lastEventId = message.id;
          if (!message.event) return;
          try {
            const event = parseStreamEvent(message.event, message.data);
            if (event) queue.push({ ...event, id: message.id ?? "" });
          } catch (error) {
            // Reconnecting would replay the same event: a contract mismatch is final.
            invalidEvent ??= new ApiError(200, "invalid_response", `invalid '${message.event}' event`, {
              cause: error,
            });
          }
        },
        onRetry(retryMs) {
          serverRetryMs = retryMs;
        },
      });
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let endReason: string | undefined;
      try {
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) break;
          parser.feed(decoder.decode(chunk.value, { stream: true }));
          while (queue.length > 0) {
            const envelope = queue.shift()!;
            if (envelope.type === "ready") unauthorizedInARow = 0;
            if (envelope.type === "end") endReason = envelope.data.reason;
            yield envelope;
          }
          if (invalidEvent) throw giveUp(invalidEvent);
        }
      } catch (error) {
        if (error === invalidEvent) throw error;
        if (signal.aborted) return;
        readError = error;
      } finally {
        reader.cancel().catch(() => {});
      }
      if (signal.aborted) return;
      if (endReason === "token_expired") {
        // Expected end of a token's life: refresh and resume at once, losing nothing.
        needsToken = true;
        continue;
      }
      const reason = readError
        ? ApiError.network(readError)
        : new ApiError(0, "network", `stream closed${endReason ? ` (${endReason})` : ""}`);
      if (!(await fail(reason))) return;
    }
  } finally {
    options.signal?.removeEventListener("abort", onOuterAbort);
    controller.abort();
    report(finalError ? { status: "closed", error: finalError, failures } : { status: "closed", failures });
  }
}
