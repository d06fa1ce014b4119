import { wallClockMs } from "./clock.ts";
import { parseUpstreamModel, stampToken } from "./stamped-tokens.ts";

export interface StampedUpstream {
  /** `http://127.0.0.1:<port>`; the OpenAI base URL is `url + "/v1"`. */
  url: string;
  /** Releases every request held by the `gate` model, and lets later ones through. */
  openGate(): void;
  /** Holds `gate` requests again (until the next openGate). */
  closeGate(): void;
  /** Requests answered so far (all models). */
  requestCount(): number;
  stop(): Promise<void>;
}

const encoder = new TextEncoder();
const chunkPrefix =
  '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":0,"model":"bench","choices":';
const contentFrame = (text: string) =>
  encoder.encode(
    `data: ${chunkPrefix}[{"index":0,"delta":{"content":${JSON.stringify(text)}},"finish_reason":null}]}\n\n`,
  );
const roleFrame = encoder.encode(
  `data: ${chunkPrefix}[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`,
);
const finishFrames = (tokens: number) =>
  encoder.encode(
    `data: ${chunkPrefix}[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n` +
      `data: ${chunkPrefix}[],"usage":{"prompt_tokens":10,"completion_tokens":${tokens},"total_tokens":${10 + tokens}}}\n\n` +
      "data: [DONE]\n\n",
  );

const sleepUntil = (deadline: number) => {
  const wait = deadline - wallClockMs();
  return wait > 0 ? Bun.sleep(wait) : Promise.resolve();
};

/**
 * An OpenAI-compatible chat-completions upstream (streaming only) whose tokens are stamped with
 * their send time. The model name picks the behaviour (see parseUpstreamModel).
 */
export function startStampedUpstream(): StampedUpstream {
  // Starts closed: a `gate` request waits for openGate().
  let gateOpen = false;
  let releaseGate: () => void = () => {};
  let gate = new Promise<void>((resolve) => {
    releaseGate = resolve;
  });
  const openGate = () => {
    gateOpen = true;
    releaseGate();
  };
  const closeGate = () => {
    if (!gateOpen) return;
    gateOpen = false;
    gate = new Promise<void>((resolve) => {
      releaseGate = resolve;
    });
  };
  let requests = 0;

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    // Gated requests wait as long as the bench needs.
    idleTimeout: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (request.method === "POST" && path === "/control/open-gate") {
        openGate();
        return Response.json({ open: true });
      }
      if (request.method === "POST" && path === "/control/close-gate") {
        closeGate();
        return Response.json({ open: false });
      }
      if (request.method !== "POST" || !path.endsWith("/chat/completions")) {
        return Response.json({ error: { message: `no route ${path}` } }, { status: 404 });
      }
      requests++;
      const body = (await request.json().catch(() => null)) as { model?: unknown } | null;
      const behaviour = typeof body?.model === "string" ? parseUpstreamModel(body.model) : null;
      if (!behaviour) {
        return Response.json(
          { error: { message: "model must be stamp-<tokens>-<ms> or gate" } },
          { status: 400 },
        );
      }
      const signal = request.signal;
      const stream = new ReadableStream<Uint8Array>({
        async start(controller) {
          try {
            controller.enqueue(roleFrame);
            if (behaviour.kind === "gate") {
              if (!gateOpen) await gate;
              controller.enqueue(contentFrame(stampToken(wallClockMs())));
              controller.enqueue(finishFrames(1));
            } else {
              const startedAt = wallClockMs();
              for (let index = 0; index < behaviour.tokens && !signal.aborted; index++) {
                if (behaviour.intervalMs > 0) await sleepUntil(startedAt + index * behaviour.intervalMs);
                controller.enqueue(contentFrame(stampToken(wallClockMs())));
              }
              controller.enqueue(finishFrames(behaviour.tokens));
            }
            controller.close();
          } catch {
            // the client left
          }
        },
      });
      return new Response(stream, {
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
      });
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    openGate,
    closeGate,
    requestCount: () => requests,
    stop: () => server.stop(true),
  };
}
