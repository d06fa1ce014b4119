/**
 * The bare relay floor (its own process): per request, read the same stamped upstream's
 * OpenAI-compatible stream, parse each SSE event's JSON and write one SSE event per token, as
 * lean as Bun allows (Bun.serve, fetch, eventsource-parser, a direct stream). No auth, no
 * storage, no run: what any relay must do. Env UPSTREAM_URL (the upstream's base, without /v1).
 * Prints {"type":"ready","url"}; the client reads it like an OpenAI stream (POST …/chat/completions).
 */
import { createParser } from "eventsource-parser";
import { emit } from "../child-protocol.ts";

/** Ends the process with a code. */
const exitProcess: (code?: number) => never = process.exit.bind(process);

const upstreamUrl = `${process.env.UPSTREAM_URL}/v1/chat/completions`;

interface UpstreamChunk {
  choices?: Array<{ delta?: { content?: string } }>;
}

/** One token as the SSE event the relay writes (OpenAI's chunk shape, trimmed to the token). */
const tokenEvent = (content: string) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;

/** Relays the upstream body token by token; a direct stream writes straight to the socket. */
function relayStream(upstream: ReadableStream<Uint8Array>): ReadableStream {
  return new ReadableStream({
    type: "direct",
    async pull(controller) {
      const parser = createParser({
        onEvent(event) {
          if (event.data === "[DONE]") return;
          const content = (JSON.parse(event.data) as UpstreamChunk).choices?.[0]?.delta?.content;
          if (content) controller.write(tokenEvent(content));
        },
      });
      const decoder = new TextDecoder();
      for await (const bytes of upstream) {
        parser.feed(decoder.decode(bytes, { stream: true }));
        await controller.flush();
      }
      controller.write("data: [DONE]\n\n");
      await controller.end();
    },
  });
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  idleTimeout: 0,
  async fetch(request) {
    const upstream = await fetch(upstreamUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: await request.text(),
      signal: request.signal,
    });
    if (!upstream.ok || !upstream.body) return new Response(await upstream.text(), { status: 502 });
    return new Response(relayStream(upstream.body), {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  },
});

emit({ type: "ready", url: `http://127.0.0.1:${server.port}` });
process.on("SIGTERM", () => {
  server.stop(true).finally(() => exitProcess(0));
});
