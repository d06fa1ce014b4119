import { afterAll, describe, expect, test } from "bun:test";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ToolDefinition } from "@promptrun/contract";
import { z } from "zod";
import { PromptrunError } from "../errors.ts";
import { openRunTools, type RunTools, type RunToolsContext, type ToolKind } from "./index.ts";
import {
  type FakeMcpServer,
  type LocalServer,
  startHttpServer,
  startMcpServer,
  testContext,
} from "./tools-test-fixture.ts";

const servers: LocalServer[] = [];
const track = <T extends LocalServer>(server: T): T => {
  servers.push(server);
  return server;
};
afterAll(() => {
  for (const server of servers) server.stop();
});

/** Two tools, one that reports an error, one with structured output. */
function docsServer(server: McpServer) {
  server.registerTool(
    "search_docs",
    { description: "Search the docs.", inputSchema: { query: z.string() } },
    async ({ query }) => ({ content: [{ type: "text", text: `3 pages about ${query}` }] }),
  );
  server.registerTool(
    "get_page",
    {
      description: "One page.",
      inputSchema: { id: z.number().int() },
      outputSchema: { id: z.number(), title: z.string() },
    },
    async ({ id }) => ({
      content: [{ type: "text", text: JSON.stringify({ id, title: "Intro" }) }],
      structuredContent: { id, title: "Intro" },
    }),
  );
  server.registerTool(
    "delete_page",
    { description: "Fails.", inputSchema: { id: z.number() } },
    async ({ id }) => ({
      content: [
        { type: "text", text: `page ${id} is protected` },
        { type: "text", text: "ask an admin" },
      ],
      isError: true,
    }),
  );
}

const mcpTool = (
  server: FakeMcpServer,
  extra: Partial<Extract<ToolDefinition, { type: "mcp" }>> = {},
): ToolDefinition => ({
  type: "mcp",
  server: { url: server.url, headers: { Authorization: "Bearer {{env.MCP_TOKEN}}" } },
  ...extra,
});

const context = (overrides: Partial<RunToolsContext> = {}) =>
  testContext({ env: { MCP_TOKEN: "tok-1" }, ...overrides });
const signal = () => new AbortController().signal;

/** The rejection of openRunTools as `code: message`. */
async function openFailure(
  tools: ToolDefinition[],
  overrides: Partial<RunToolsContext> = {},
): Promise<string> {
  try {
    const opened = await openRunTools(tools, context(overrides));
    await opened.close();
  } catch (error) {
    if (!PromptrunError.isInstance(error)) throw error;
    return `${error.code}: ${error.message}`;
  }
  return "opened";
}

describe("mcp tools: listing and calling", () => {
  test("an mcp entry expands to the server's tools, in prompt order, with their input schemas", async () => {
    const docs = track(startMcpServer({ register: docsServer }));
    const tools: RunTools = await openRunTools(
      [
        { type: "function", name: "lookup_order", parameters: { type: "object" } },
        mcpTool(docs),
        {
          type: "http",
          name: "get_weather",
          parameters: { type: "object" },
          request: { method: "GET", url: "https://x.test/" },
        },
      ],
      context(),
    );
    try {
      const kinds: Array<[string, ToolKind]> = tools.offered.map((tool) => [tool.name, tool.kind]);
      expect(kinds).toEqual([
        ["lookup_order", "function"],
        ["search_docs", "mcp"],
        ["get_page", "mcp"],
        ["delete_page", "mcp"],
        ["get_weather", "http"],
      ]);
      const search = tools.offered[1]!;
      expect(search.description).toBe("Search the docs.");
      expect(search.parameters).toMatchObject({
        type: "object",
        properties: { query: { type: "string" } },
        required: ["query"],
      });
      expect(tools.kindOf("search_docs")).toBe("mcp");
      expect(tools.kindOf("lookup_order")).toBe("function");
      expect(tools.kindOf("nope")).toBeNull();
      // Listed once per run.
      expect(docs.methods.filter((method) => method === "tools/list")).toHaveLength(1);

      const result = await tools.execute(
        { id: "c1", name: "search_docs", arguments: { query: "billing" } },
        signal(),
      );
      expect(result).toEqual({ isError: false, output: "3 pages about billing" });
      const structured = await tools.execute({ id: "c2", name: "get_page", arguments: { id: 7 } }, signal());
      expect(structured).toEqual({ isError: false, output: { id: 7, title: "Intro" } });
      // The templated header reached the server on every request, and nothing of ours beside it.
      const posts = docs.received.filter((request) => request.method === "POST");
      expect(posts.length).toBeGreaterThanOrEqual(4);
      for (const post of posts) {
        expect(post.headers.authorization).toBe("Bearer tok-1");
        expect(post.headers.cookie).toBeUndefined();
      }
    } finally {
      await tools.close();
    }
    expect(docs.deletes).toBe(1);
  });

  test("allowedTools offers only the named tools", async () => {
    const docs = track(startMcpServer({ register: docsServer }));
    const tools = await openRunTools(
      [mcpTool(docs, { allowedTools: ["get_page", "search_docs"] })],
      context(),
    );
    try {
      expect(tools.offered.map((tool) => tool.name)).toEqual(["search_docs", "get_page"]);
      expect(tools.kindOf("delete_page")).toBeNull();
      expect(await tools.execute({ id: "c", name: "delete_page", arguments: { id: 1 } }, signal())).toEqual({
        isError: true,
        output: "no tool named 'delete_page'",
      });
    } finally {
      await tools.close();
    }
  });

  test("allowedTools naming a tool the server lacks fails the open, naming the entry", async () => {
    const docs = track(startMcpServer({ register: docsServer }));
    const port = new URL(docs.url).port;
    expect(await openFailure([mcpTool(docs, { allowedTools: ["search_docs", "drop_db"] })])).toBe(
      `invalid: tools[0] (mcp http://127.0.0.1:${port}/…): allowedTools names drop_db, which the server does not offer (it offers: search_docs, get_page, delete_page)`,
    );
  });

  test("a tool result with isError is an error result, its text items joined", async () => {
    const docs = track(startMcpServer({ register: docsServer }));
    const tools = await openRunTools([mcpTool(docs)], context());
    try {
      expect(await tools.execute({ id: "c", name: "delete_page", arguments: { id: 4 } }, signal())).toEqual({
        isError: true,
        output: "page 4 is protected\nask an admin",
      });
    } finally {
      await tools.close();
    }
  });
});

describe("mcp tools: names", () => {
  test("a server tool named like another tool of the prompt fails the open; so does one named like another server's", async () => {
    const docs = track(startMcpServer({ register: docsServer }));
    const port = new URL(docs.url).port;
    const httpNamedLikeIt: ToolDefinition = {
      type: "http",
      name: "get_page",
      parameters: { type: "object" },
      request: { method: "GET", url: "https://x.test/" },
    };
    expect(await openFailure([mcpTool(docs), httpNamedLikeIt])).toBe(
      `invalid: tools[0] (mcp http://127.0.0.1:${port}/…): the server offers a tool named 'get_page', as another tool of the prompt is named; leave it out with allowedTools`,
    );
    const twin = track(startMcpServer({ register: docsServer }));
    expect(await openFailure([mcpTool(docs, { allowedTools: ["search_docs"] }), mcpTool(twin)])).toStartWith(
      `invalid: tools[1] (mcp http://127.0.0.1:${new URL(twin.url).port}/…): the server offers a tool named 'search_docs'`,
    );
    expect(
      await openFailure([
        mcpTool(docs, { allowedTools: ["search_docs"] }),
        mcpTool(twin, { allowedTools: ["get_page"] }),
      ]),
    ).toBe("opened");
  });

  test("a server tool whose name a provider would refuse fails the open unless allowedTools leaves it out", async () => {
    const dotted = track(
      startMcpServer({
        register: (server) => {
          server.registerTool("docs.search", { inputSchema: {} }, async () => ({ content: [] }));
          server.registerTool("ping", { inputSchema: {} }, async () => ({
            content: [{ type: "text", text: "pong" }],
          }));
        },
      }),
    );
    expect(await openFailure([mcpTool(dotted)])).toContain(
      "offers a tool named 'docs.search', which is not a valid tool name",
    );
    expect(await openFailure([mcpTool(dotted, { allowedTools: ["ping"] })])).toBe("opened");
  });
});

describe("mcp tools: failures", () => {
  test("a server that hangs on tools/list: the open times out", async () => {
    const hanging = track(startMcpServer({ register: docsServer, hangOn: "tools/list" }));
    const started = performance.now();
    const message = await openFailure([mcpTool(hanging)], { timeoutMs: 500 });
    expect(message).toBe(
      `invalid: tools[0] (mcp http://127.0.0.1:${new URL(hanging.url).port}/…): MCP request timed out after 0.5 s`,
    );
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  test("a server that hangs on tools/call: the call times out (the tool's timeoutSeconds), the session still closes", async () => {
    const hanging = track(startMcpServer({ register: docsServer, hangOn: "tools/call" }));
    const tools = await openRunTools(
      [mcpTool(hanging, { timeoutSeconds: 1 })],
      context({ timeoutMs: 60_000 }),
    );
    const started = performance.now();
    const result = await tools.execute({ id: "c", name: "search_docs", arguments: { query: "x" } }, signal());
    expect(result).toEqual({ isError: true, output: "MCP request timed out after 1 s" });
    expect(performance.now() - started).toBeLessThan(3_000);
    await tools.close();
    expect(hanging.deletes).toBe(1);
  });

  test("the run's signal cancels an MCP call", async () => {
    const hanging = track(startMcpServer({ register: docsServer, hangOn: "tools/call" }));
    const run = new AbortController();
    const tools = await openRunTools([mcpTool(hanging)], context({ signal: run.signal }));
    const pending = tools.execute({ id: "c", name: "search_docs", arguments: { query: "x" } }, signal());
    setTimeout(() => run.abort(), 50);
    expect(await pending).toEqual({ isError: true, output: "MCP request cancelled" });
    await tools.close();
  });

  test.each([
    [
      "HTML",
      () => new Response("<html>hello</html>", { headers: { "content-type": "text/html" } }),
      "Unexpected content type",
    ],
    [
      "broken JSON",
      () => new Response("{oops", { headers: { "content-type": "application/json" } }),
      "the server's answer is not JSON",
    ],
    [
      "JSON that is not JSON-RPC",
      () => Response.json({ hello: "world" }),
      "the server's answer is not valid MCP (JSON-RPC)",
    ],
    [
      "an SSE event that is not JSON-RPC",
      () =>
        new Response('event: message\ndata: {"nope":1}\n\n', {
          headers: { "content-type": "text/event-stream" },
        }),
      "timed out after 0.5 s (the server's answer is not",
    ],
    ["a 500", () => new Response("boom", { status: 500 }), "boom"],
  ])("a server answering %s fails the open with a clear reason", async (_what, answer, expected) => {
    const garbage = track(startHttpServer(answer));
    const message = await openFailure([{ type: "mcp", server: { url: `${garbage.origin}/mcp` } }], {
      timeoutMs: 500,
    });
    expect(message).toStartWith(`invalid: tools[0] (mcp ${garbage.origin}/…): MCP request `);
    expect(message).toContain(expected);
  });

  test("an answer larger than maxResponseBytes fails the call", async () => {
    const big = track(
      startMcpServer({
        register: (server) =>
          server.registerTool("dump", { inputSchema: {} }, async () => ({
            content: [{ type: "text", text: "x".repeat(300_000) }],
          })),
      }),
    );
    const tools = await openRunTools(
      [mcpTool(big)],
      context({ maxResponseBytes: 100_000, timeoutMs: 1_000 }),
    );
    try {
      const result = await tools.execute({ id: "c", name: "dump", arguments: {} }, signal());
      expect(result.isError).toBe(true);
      expect(result.output).toContain("response exceeds 100000 bytes");
    } finally {
      await tools.close();
    }
  });

  test("a private server URL is refused when private URLs are not allowed; nothing reaches it", async () => {
    const docs = track(startMcpServer({ register: docsServer }));
    const message = await openFailure([mcpTool(docs)], { allowPrivateUrls: false });
    expect(message).toContain("MCP request refused: url must resolve to a public address");
    expect(docs.received).toHaveLength(0);
  });

  test("when one server fails, the others' sessions are closed; the URL in the message keeps no path or query", async () => {
    const docs = track(startMcpServer({ register: docsServer }));
    const garbage = track(startHttpServer(() => new Response("nope", { status: 404 })));
    const message = await openFailure([
      mcpTool(docs),
      { type: "mcp", server: { url: `${garbage.origin}/secret-path/mcp?token={{env.MCP_TOKEN}}` } },
    ]);
    expect(message).toStartWith(`invalid: tools[1] (mcp ${garbage.origin}/…): `);
    expect(message).not.toContain("tok-1");
    expect(message).not.toContain("secret-path");
    expect(docs.deletes).toBe(1);
  });

  test("a server that is not there fails the open", async () => {
    const gone = track(startHttpServer(() => new Response("bye")));
    gone.stop();
    const message = await openFailure([{ type: "mcp", server: { url: `${gone.origin}/mcp` } }]);
    expect(message).toStartWith(`invalid: tools[0] (mcp ${gone.origin}/…): MCP request failed: `);
  });

  test("a missing env var in the server's headers fails the open, naming it", async () => {
    const docs = track(startMcpServer({ register: docsServer }));
    expect(await openFailure([mcpTool(docs)], { env: {} })).toContain("env var 'MCP_TOKEN' is not set");
    expect(docs.received).toHaveLength(0);
  });
});
