import { ApiError, createPromptrunClient } from "@promptrun/client";
import { channelSchema, submitToolOutputsRequestSchema, uuidSchema } from "@promptrun/contract";
import { z } from "zod";
import homepage from "./web/index.html";

/** Options of {@link startExampleServer}. */
export interface ExampleServerOptions {
  /** Promptrun's base URL. */
  promptrunUrl: string;
  /** The tenant API key: it stays in this process, the browser never sees it. */
  apiKey: string;
  /** Prompt the chat runs (default `chat` at `latest`). */
  prompt?: { slug: string; version: string };
  hostname?: string;
  /** Default 0: any free port. */
  port?: number;
  /** Bun's development mode: hot reload and readable errors. */
  development?: boolean;
}

/** A running example server. */
export interface ExampleServer {
  url: string;
  stop(): Promise<void>;
}

const chatRequestSchema = z.strictObject({
  thread: uuidSchema,
  message: z.string().trim().min(1, "message is empty").max(4_000, "message is over 4000 characters"),
  channel: channelSchema.optional(),
});
const tokenRequestSchema = z.strictObject({ thread: uuidSchema });

const jsonError = (status: number, message: string) => Response.json({ error: message }, { status });

/** Maps a failure to the browser: Promptrun's status and message, 502 when Promptrun is unreachable. */
function errorResponse(error: unknown): Response {
  if (ApiError.isInstance(error)) {
    return jsonError(
      error.status === 0 ? 502 : error.status,
      error.status === 0 ? "Promptrun is unreachable" : error.message,
    );
  }
  console.error(error);
  return jsonError(500, "internal error");
}

async function readJson<T>(request: Request, schema: z.ZodType<T>): Promise<T | Response> {
  const body = await request.json().catch(() => undefined);
  const parsed = schema.safeParse(body);
  if (!parsed.success) return jsonError(400, parsed.error.issues[0]?.message ?? "invalid request");
  return parsed.data;
}

/**
 * The example's backend: serves the React app, holds the API key, starts runs
 * (`POST /api/chat`), mints stream tokens (`POST /api/token`), reads runs, passes the page's
 * answers to client tool calls on (`POST /api/runs/:id/tool-outputs`) and relays the thread's
 * stream under its own origin (`GET /api/stream/:thread`), so the browser needs no cross-origin
 * access to Promptrun.
 */
export function startExampleServer(options: ExampleServerOptions): ExampleServer {
  const promptrunUrl = options.promptrunUrl.replace(/\/+$/, "");
  const client = createPromptrunClient({ baseUrl: promptrunUrl, apiKey: options.apiKey });
  const prompt = options.prompt ?? { slug: "chat", version: "latest" };

  const server = Bun.serve({
    hostname: options.hostname ?? "127.0.0.1",
    port: options.port ?? 0,
    development: options.development ?? false,
    routes: {
      "/": homepage,
      "/api/token": {
        async POST(request) {
          const body = await readJson(request, tokenRequestSchema);
          if (body instanceof Response) return body;
          try {
            const token = await client.threads.createStreamToken(body.thread);
            return Response.json({ ...token, url: `/api/stream/${body.thread}` });
          } catch (error) {
            return errorResponse(error);
          }
        },
      },
      "/api/chat": {
        async POST(request) {
          const body = await readJson(request, chatRequestSchema);
          if (body instanceof Response) return body;
          try {
            const created = await client.runs.create(prompt.slug, prompt.version, {
              inputs: { message: body.message },
              thread: body.thread,
              channel: body.channel ?? "chat",
            });
            return Response.json(created, { status: 202 });
          } catch (error) {
            return errorResponse(error);
          }
        },
      },
      "/api/runs/:id": {
        async GET(request) {
          try {
            return Response.json(await client.runs.get(request.params.id));
          } catch (error) {
            return errorResponse(error);
          }
        },
      },
      // A stream token may not answer tool calls: the page's outputs go through this backend,
      // which holds the API key. A real app checks here that the run is the user's own.
      "/api/runs/:id/tool-outputs": {
        async POST(request) {
          const body = await readJson(request, submitToolOutputsRequestSchema);
          if (body instanceof Response) return body;
          try {
            const answered = await client.runs.submitToolOutputs(request.params.id, body.toolOutputs);
            return Response.json(answered, { status: 202 });
          } catch (error) {
            return errorResponse(error);
          }
        },
      },
      "/api/stream/:thread": {
        async GET(request, bunServer) {
          // A relayed stream is quiet between events: no idle timeout for it.
          bunServer.timeout(request, 0);
          const headers: Record<string, string> = { accept: "text/event-stream" };
          for (const name of ["authorization", "last-event-id"]) {
            const value = request.headers.get(name);
            if (value) headers[name] = value;
          }
          try {
            const upstream = await fetch(
              `${promptrunUrl}/stream/${encodeURIComponent(request.params.thread)}`,
              {
                headers,
                signal: request.signal,
              },
            );
            return new Response(upstream.body, {
              status: upstream.status,
              headers: {
                "content-type": upstream.headers.get("content-type") ?? "application/json",
                "cache-control": "no-cache, no-transform",
                "x-accel-buffering": "no",
              },
            });
          } catch (error) {
            return errorResponse(ApiError.network(error));
          }
        },
      },
      "/api/*": () => jsonError(404, "not found"),
    },
  });

  return {
    url: `http://${server.hostname}:${server.port}`,
    async stop() {
      await server.stop(true);
    },
  };
}
