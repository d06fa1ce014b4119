/**
 * Real local servers for the server-tool tests: an HTTP API that records what it received, and
 * an MCP server made of the SDK's own server classes (McpServer + the web-standard Streamable
 * HTTP transport) behind Bun.serve, with wire-level faults (hang on a method, garbage answers).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { RunToolsContext } from "./index.ts";

export interface ReceivedRequest {
  method: string;
  /** Path and query as sent. */
  target: string;
  headers: Record<string, string>;
  body: string;
}

export interface LocalServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  received: ReceivedRequest[];
  stop(): void;
}

/** Answers only after the client gave up (no promise left pending once the client is gone). */
export const hangUntilAborted = (request: Request) =>
  new Promise<Response>((resolve) => {
    request.signal.addEventListener("abort", () => resolve(new Response(null, { status: 499 })));
  });

/** A Bun.serve on 127.0.0.1 that records each request (method, target, headers, body) before `handle` answers. */
export function startHttpServer(
  handle: (request: Request, url: URL) => Response | Promise<Response>,
): LocalServer {
  const received: ReceivedRequest[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (request) => {
      const url = new URL(request.url);
      const body = await request.clone().text();
      received.push({
        method: request.method,
        target: url.pathname + url.search,
        headers: Object.fromEntries(request.headers.entries()),
        body,
      });
      return handle(request, url);
    },
  });
  return { origin: `http://127.0.0.1:${server.port}`, received, stop: () => server.stop(true) };
}

/** A run context for tests: 127.0.0.1 servers need private URLs allowed. */
export const testContext = (overrides: Partial<RunToolsContext> = {}): RunToolsContext => ({
  inputs: {},
  env: {},
  allowPrivateUrls: true,
  timeoutMs: 5_000,
  maxResponseBytes: 1024 * 1024,
  signal: new AbortController().signal,
  ...overrides,
});

export interface FakeMcpServer extends LocalServer {
  /** `<origin>/mcp` */
  url: string;
  /** JSON-RPC methods received, in order (`initialize`, `tools/list`, `tools/call`, …). */
  methods: string[];
  /** Sessions the client ended with DELETE. */
  deletes: number;
}

/** The JSON-RPC method of a POST body, or null (a batch, a response, not JSON). */
const methodOf = (body: string): string | null => {
  try {
    const message = JSON.parse(body) as { method?: unknown };
    return typeof message.method === "string" ? message.method : null;
  } catch {
    return null;
  }
};

/**
 * An MCP server built with the SDK: `register` adds its tools (a fresh McpServer per session).
 * `hangOn` names a JSON-RPC method whose requests get no answer at all.
 */
export function startMcpServer(options: {
  register: (server: McpServer) => void;
  hangOn?: string;
}): FakeMcpServer {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const methods: string[] = [];
  const fake = { methods, deletes: 0 };
  const http = startHttpServer(async (request, _url) => {
    const method = request.method === "POST" ? methodOf(await request.clone().text()) : null;
    if (method) methods.push(method);
    if (method !== null && method === options.hangOn) return hangUntilAborted(request);
    if (request.method === "DELETE") fake.deletes++;
    const sessionId = request.headers.get("mcp-session-id");
    let transport = sessionId ? sessions.get(sessionId) : undefined;
    if (!transport) {
      const created = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, created),
      });
      const server = new McpServer({ name: "fake-mcp", version: "1.0.0" });
      options.register(server);
      await server.connect(created);
      transport = created;
    }
    return transport.handleRequest(request);
  });
  return Object.assign(fake, http, { url: `${http.origin}/mcp` });
}
