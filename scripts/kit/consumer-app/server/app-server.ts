import { join, normalize } from "node:path";
import { ApiError, createPromptrunClient } from "@promptrun/client";

/** Options of {@link startAppServer}. */
export interface AppServerOptions {
  promptrunUrl: string;
  /** The tenant's API key: it stays on the server. */
  apiKey: string;
  /** The built app (vite build's dist/) to serve; none in the app's unit tests. */
  staticDir?: string;
  port?: number;
}

const jsonError = (status: number, message: string) => Response.json({ error: message }, { status });

function errorResponse(error: unknown): Response {
  if (ApiError.isInstance(error)) return jsonError(error.status === 0 ? 502 : error.status, error.message);
  return jsonError(500, "internal error");
}

const readBody = async (request: Request): Promise<Record<string, unknown>> => {
  const body: unknown = await request.json().catch(() => null);
  return typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
};

/** The app's backend: starts runs of the `chat` prompt, mints stream tokens, relays the stream. */
export function startAppServer(options: AppServerOptions) {
  const promptrunUrl = options.promptrunUrl.replace(/\/+$/, "");
  const client = createPromptrunClient({ baseUrl: promptrunUrl, apiKey: options.apiKey });
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
    routes: {
      "/api/token": {
        async POST(request) {
          const { thread } = await readBody(request);
          if (typeof thread !== "string") return jsonError(400, "thread is required");
          try {
            const token = await client.threads.createStreamToken(thread);
            return Response.json({ ...token, url: `/api/stream/${thread}` });
          } catch (error) {
            return errorResponse(error);
          }
        },
      },
      "/api/chat": {
        async POST(request) {
          const { thread, message } = await readBody(request);
          if (typeof thread !== "string" || typeof message !== "string") {
            return jsonError(400, "thread and message are required");
          }
          try {
            const created = await client.runs.create("chat", "latest", {
              inputs: { message },
              thread,
              channel: "chat",
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
      "/api/stream/:thread": {
        async GET(request, bunServer) {
          bunServer.timeout(request, 0);
          const headers: Record<string, string> = { accept: "text/event-stream" };
          for (const name of ["authorization", "last-event-id"]) {
            const value = request.headers.get(name);
            if (value) headers[name] = value;
          }
          const upstream = await fetch(
            `${promptrunUrl}/stream/${encodeURIComponent(request.params.thread)}`,
            {
              headers,
              signal: request.signal,
            },
          ).catch(() => null);
          if (!upstream) return jsonError(502, "Promptrun is unreachable");
          return new Response(upstream.body, { status: upstream.status, headers: upstream.headers });
        },
      },
    },
    async fetch(request) {
      const dir = options.staticDir;
      if (!dir) return jsonError(404, "not found");
      const path = normalize(new URL(request.url).pathname).replace(/^\/+/, "");
      const file = Bun.file(join(dir, path === "" ? "index.html" : path));
      return (await file.exists()) ? new Response(file) : jsonError(404, "not found");
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}
