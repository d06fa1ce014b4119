import {
  defaultUsage,
  type FakeErrorReply,
  type FakeFloodReply,
  type FakeRequest,
  type FakeScript,
  type FakeStreamReply,
  type FakeToolCall,
  type FakeUsage,
  replyFor,
} from "./fake-provider-script.ts";
import type { RequestTools } from "./fake-request-tools.ts";

export interface FakeStreamRecord {
  requestIndex: number;
  openedAt: number;
  /** `Date.now()` when the stream ended, however it ended. */
  endedAt: number | null;
  /** Position of the end in the server's event order (see FakeRequest.sequence). */
  endSequence: number | null;
  outcome: "completed" | "cut" | "client-closed" | "server-closed" | null;
  tokensSent: number;
}

export interface FakeProviderServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `url + "/v1"`: what OPENAI_BASE_URL / ANTHROPIC_BASE_URL take. */
  baseUrl: string;
  requests: FakeRequest[];
  streams: FakeStreamRecord[];
  openStreams(): number;
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  waitForStreamEnd(requestIndex: number, timeoutMs?: number): Promise<FakeStreamRecord>;
  /** Stops the server and drops every open connection (hanging streams included). */
  close(): Promise<void>;
}

/** SSE frames of one provider's streaming format. */
export interface StreamFrames {
  start(usage: FakeUsage): string[];
  token(text: string): string[];
  /** One tool call (the `index`-th of the reply), its arguments in pieces. */
  toolCall(call: FakeToolCall, index: number): string[];
  /** `finishReason`: the provider's own word for why it stopped; undefined for its usual one. */
  finish(usage: FakeUsage, finishReason?: string): string[];
}

export interface WireFormat {
  /** Path suffix this provider answers (e.g. `/chat/completions`). */
  path: string;
  errorBody(reply: FakeErrorReply): unknown;
  /** The frames of one streamed reply to the request `body`. */
  frames(body: unknown, reply: FakeStreamReply): StreamFrames;
  /** What the request carried about tools. */
  requestTools(body: unknown): RequestTools;
}

const encoder = new TextEncoder();

export function startFakeProviderServer(format: WireFormat, script: FakeScript): FakeProviderServer {
  const requests: FakeRequest[] = [];
  const streams: FakeStreamRecord[] = [];
  const waiters = new Set<() => void>();
  const releaseOnClose = new Set<() => void>();
  let sequence = 0;
  let closed = false;

  const notify = () => {
    for (const waiter of waiters) waiter();
  };

  const waitUntil = <T>(check: () => T | undefined, timeoutMs: number, what: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const immediate = check();
      if (immediate !== undefined) return resolve(immediate);
      const waiter = () => {
        const value = check();
        if (value === undefined) return;
        waiters.delete(waiter);
        clearTimeout(timer);
        resolve(value);
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`fake provider: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      waiters.add(waiter);
    });

  const endStream = (record: FakeStreamRecord, outcome: NonNullable<FakeStreamRecord["outcome"]>) => {
    if (record.outcome !== null) return;
    record.outcome = outcome;
    record.endedAt = Date.now();
    record.endSequence = sequence++;
    notify();
  };

  /** Resolves after `ms`, or early when `stillOpen()` turns false or the server closes. */
  const pause = (ms: number, stillOpen: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      if (ms <= 0 || !stillOpen()) return resolve();
      const done = () => {
        clearTimeout(timer);
        releaseOnClose.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      releaseOnClose.add(done);
    });

  const streamResponse = (reply: FakeStreamReply, request: FakeRequest, signal: AbortSignal): Response => {
    const record: FakeStreamRecord = {
      requestIndex: request.index,
      openedAt: Date.now(),
      endedAt: null,
      endSequence: null,
      outcome: null,
      tokensSent: 0,
    };
    streams.push(record);
    const usage = defaultUsage(reply);
    const frames = format.frames(request.body, reply);
    const isOpen = () => record.outcome === null && !closed;
    let wakeUp: (() => void) | null = null;
    const clientLeft = () => {
      endStream(record, "client-closed");
      wakeUp?.();
    };
    signal.addEventListener("abort", clientLeft);

    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        const send = (chunks: string[]) => {
          if (!isOpen()) return;
          try {
            for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
          } catch {
            endStream(record, "client-closed");
          }
        };
        send(frames.start(usage));
        for (const [index, token] of reply.tokens.entries()) {
          if (reply.cutAfterTokens !== undefined && index >= reply.cutAfterTokens) break;
          if (reply.hangAfterTokens !== undefined && index >= reply.hangAfterTokens) break;
          await pause(reply.tokenDelayMs ?? 0, isOpen);
          if (!isOpen()) return;
          send(frames.token(token));
          record.tokensSent++;
        }
        if (reply.cutAfterTokens !== undefined && isOpen()) {
          // The tokens sent must reach the client before the cut: a reset right after the last
          // write can discard what the client had not read yet.
          await pause(20, isOpen);
          if (!isOpen()) return;
          // Erroring the body makes Bun drop the connection mid-response: the client sees a reset.
          endStream(record, "cut");
          controller.error(undefined);
          return;
        }
        if (reply.hangAfterTokens !== undefined) {
          await new Promise<void>((resolve) => {
            wakeUp = resolve;
            releaseOnClose.add(resolve);
            if (!isOpen()) resolve();
          });
          return;
        }
        for (const [index, call] of (reply.toolCalls ?? []).entries()) {
          await pause(reply.tokenDelayMs ?? 0, isOpen);
          if (!isOpen()) return;
          send(frames.toolCall(call, index));
        }
        if (reply.holdBeforeFinish) await reply.holdBeforeFinish;
        if (!isOpen()) return;
        send(frames.finish(usage, reply.finishReason));
        endStream(record, "completed");
        try {
          controller.close();
        } catch {
          // the client left meanwhile
        }
      },
      cancel() {
        clientLeft();
      },
    });
    return new Response(body, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  };

  /** Sends `x` bytes without a newline; tokensSent counts bytes. Ends when the client leaves. */
  const floodResponse = (reply: FakeFloodReply, request: FakeRequest, signal: AbortSignal): Response => {
    const record: FakeStreamRecord = {
      requestIndex: request.index,
      openedAt: Date.now(),
      endedAt: null,
      endSequence: null,
      outcome: null,
      tokensSent: 0,
    };
    streams.push(record);
    signal.addEventListener("abort", () => endStream(record, "client-closed"));
    const chunk = encoder.encode("x".repeat(reply.chunkBytes ?? 65_536));
    const body = new ReadableStream<Uint8Array>({
      // Pull: one chunk per read, so the flood goes as fast as the client takes it.
      pull(controller) {
        if (record.outcome !== null || closed) return;
        if (record.tokensSent >= reply.bytes) {
          endStream(record, "completed");
          controller.close();
          return;
        }
        const part = chunk.subarray(0, Math.min(chunk.byteLength, reply.bytes - record.tokensSent));
        record.tokensSent += part.byteLength;
        controller.enqueue(part);
      },
      cancel() {
        endStream(record, "client-closed");
      },
    });
    const status = reply.status ?? 200;
    return new Response(body, {
      status,
      headers: { "content-type": status === 200 ? "text/event-stream" : "application/json" },
    });
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    // Hanging streams must stay open until the test closes the server.
    idleTimeout: 0,
    error: () =>
      new Response(JSON.stringify({ error: { message: "fake provider failure" } }), { status: 500 }),
    async fetch(httpRequest) {
      const url = new URL(httpRequest.url);
      const text = await httpRequest.text();
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
      const request: FakeRequest = {
        index: requests.length,
        method: httpRequest.method,
        path: url.pathname,
        headers: Object.fromEntries(httpRequest.headers.entries()),
        body,
        ...format.requestTools(body),
        receivedAt: Date.now(),
        sequence: sequence++,
      };
      requests.push(request);
      notify();
      if (!url.pathname.endsWith(format.path) || httpRequest.method !== "POST") {
        return Response.json({ error: { message: `no route ${url.pathname}` } }, { status: 404 });
      }
      const reply = await replyFor(script, request);
      if (reply.type === "error") {
        const headers: Record<string, string> = { "content-type": "application/json", ...reply.headers };
        if (reply.retryAfter !== undefined) headers["retry-after"] = reply.retryAfter;
        return new Response(JSON.stringify(format.errorBody(reply)), { status: reply.status, headers });
      }
      if (reply.type === "flood") return floodResponse(reply, request, httpRequest.signal);
      return streamResponse(reply, request, httpRequest.signal);
    },
  });

  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    streams,
    openStreams: () => streams.filter((stream) => stream.outcome === null).length,
    waitForRequests: (count, timeoutMs = 5_000) =>
      waitUntil(() => (requests.length >= count ? true : undefined), timeoutMs, `${count} requests`).then(
        () => undefined,
      ),
    waitForStreamEnd: (requestIndex, timeoutMs = 5_000) =>
      waitUntil(
        () => streams.find((stream) => stream.requestIndex === requestIndex && stream.outcome !== null),
        timeoutMs,
        `the end of stream ${requestIndex}`,
      ),
    async close() {
      if (closed) return;
      closed = true;
      for (const stream of streams) endStream(stream, "server-closed");
      for (const release of releaseOnClose) release();
      releaseOnClose.clear();
      await server.stop(true);
    },
  };
}
