import { afterAll, describe, expect, test } from "bun:test";
import type { HttpToolDefinition, ToolDefinition } from "@promptrun/contract";
import { openRunTools, type RunToolsContext, type ToolExecution } from "./index.ts";
import { hangUntilAborted, type LocalServer, startHttpServer, testContext } from "./tools-test-fixture.ts";

const servers: LocalServer[] = [];
const serve = (handle: Parameters<typeof startHttpServer>[0]) => {
  const server = startHttpServer(handle);
  servers.push(server);
  return server;
};
afterAll(() => {
  for (const server of servers) server.stop();
});

const httpTool = (
  request: HttpToolDefinition["request"],
  extra: Partial<HttpToolDefinition> = {},
): ToolDefinition => ({
  type: "http",
  name: "call_api",
  parameters: { type: "object" },
  request,
  ...extra,
});

/** Opens the one tool and executes one call of it. */
async function callTool(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  context: Partial<RunToolsContext> = {},
): Promise<ToolExecution> {
  const tools = await openRunTools([tool], testContext(context));
  try {
    const name = tools.offered[0]!.name;
    return await tools.execute({ id: "call-1", name, arguments: args }, new AbortController().signal);
  } finally {
    await tools.close();
  }
}

/** Headers any HTTP client sends on its own; everything else must come from the prompt. */
const TRANSPORT_HEADERS = new Set([
  "host",
  "user-agent",
  "accept",
  "accept-encoding",
  "connection",
  "content-length",
]);
const promptHeaders = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !TRANSPORT_HEADERS.has(name)));

describe("http tools: the request", () => {
  test("GET weather: arguments URL-encoded into the query, an env header, nothing else sent", async () => {
    const api = serve(() => Response.json({ city: "São Paulo & Co", celsius: 21 }));
    const weather: ToolDefinition = {
      type: "http",
      name: "get_weather",
      description: "Current weather for a city.",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      request: {
        method: "GET",
        url: `${api.origin}/weather?city={{args.city}}&units={{units}}`,
        headers: { Authorization: "Bearer {{env.WEATHER_KEY}}" },
      },
    };
    const result = await callTool(
      weather,
      { city: "São Paulo & Co/x?y=1" },
      { env: { WEATHER_KEY: "k-123", OTHER_SECRET: "never" }, inputs: { units: "metric" } },
    );
    expect(result).toEqual({ isError: false, output: { city: "São Paulo & Co", celsius: 21 } });
    expect(api.received).toHaveLength(1);
    const [request] = api.received;
    expect(request!.method).toBe("GET");
    const query = new URL(request!.target, api.origin).searchParams;
    expect(request!.target.startsWith("/weather?")).toBe(true);
    expect(query.get("city")).toBe("São Paulo & Co/x?y=1");
    expect(query.get("units")).toBe("metric");
    expect([...query.keys()]).toEqual(["city", "units"]);
    expect(promptHeaders(request!.headers)).toEqual({ authorization: "Bearer k-123" });
    expect(request!.body).toBe("");
  });

  test("POST without a body template sends the arguments as JSON", async () => {
    const api = serve(() => Response.json({ created: true }, { status: 201 }));
    const args = { title: "Broken printer", priority: 2, tags: ["hw"] };
    const result = await callTool(httpTool({ method: "POST", url: `${api.origin}/tickets` }), args);
    expect(result).toEqual({ isError: false, output: { created: true } });
    expect(api.received[0]!.method).toBe("POST");
    expect(api.received[0]!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(api.received[0]!.body)).toEqual(args);
  });

  test("a JSON body template escapes string values, so an argument cannot break out of its string", async () => {
    const api = serve(() => new Response("ok"));
    const tool = httpTool({
      method: "PUT",
      url: `${api.origin}/notes`,
      body: '{"text": "{{args.text}}", "count": {{args.count}}, "user": "{{env.USER}}"}',
    });
    const text = 'he said "hi", then \\ and\na new line", "admin": true';
    const result = await callTool(tool, { text, count: 3 }, { env: { USER: "ann" } });
    expect(result).toEqual({ isError: false, output: "ok" });
    expect(api.received[0]!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(api.received[0]!.body)).toEqual({ text, count: 3, user: "ann" });
  });

  test("an argument holding a template is sent as that text, never rendered", async () => {
    const api = serve(() => new Response("ok"));
    const tool = httpTool({ method: "GET", url: `${api.origin}/search?q={{args.q}}` });
    await callTool(tool, { q: "{{env.SECRET}}" }, { env: { SECRET: "s3cret" } });
    expect(new URL(api.received[0]!.target, api.origin).searchParams.get("q")).toBe("{{env.SECRET}}");
  });

  test("an env base URL starts the URL as is; an argument never can", async () => {
    const api = serve(() => new Response("ok"));
    const tool = httpTool({ method: "DELETE", url: "{{env.API_BASE}}/items/{{args.id}}" });
    const result = await callTool(tool, { id: "a/../../admin" }, { env: { API_BASE: `${api.origin}/v1` } });
    expect(result.isError).toBe(false);
    expect(api.received[0]!.method).toBe("DELETE");
    expect(api.received[0]!.target).toBe("/v1/items/a%2F..%2F..%2Fadmin");

    const hijack = await callTool(httpTool({ method: "GET", url: "{{args.url}}" }), { url: api.origin });
    expect(hijack.isError).toBe(true);
    expect(api.received).toHaveLength(1);
  });

  test("a missing env var and a header value with a line break are tool errors, nothing sent", async () => {
    const api = serve(() => new Response("ok"));
    const keyed = httpTool({
      method: "GET",
      url: `${api.origin}/x`,
      headers: { "X-Key": "{{env.MISSING_KEY}}" },
    });
    expect(await callTool(keyed, {})).toEqual({
      isError: true,
      output: expect.stringContaining("env var 'MISSING_KEY' is not set"),
    });
    const injected = httpTool({
      method: "GET",
      url: `${api.origin}/x`,
      headers: { "X-User": "{{args.user}}" },
    });
    expect(await callTool(injected, { user: "ann\r\nX-Admin: 1" })).toEqual({
      isError: true,
      output: "request.headers.X-User: not a valid header value",
    });
    expect(api.received).toHaveLength(0);
  });
});

describe("http tools: the response", () => {
  test("JSON when the content type says so and it parses; text otherwise", async () => {
    const api = serve((_request, url) => {
      if (url.pathname === "/json") return Response.json([1, 2]);
      if (url.pathname === "/problem")
        return new Response('{"a":1}', { headers: { "content-type": "application/problem+json" } });
      if (url.pathname === "/broken")
        return new Response("{not json", { headers: { "content-type": "application/json" } });
      return new Response('{"looks": "json"}', { headers: { "content-type": "text/plain" } });
    });
    const get = (path: string) => callTool(httpTool({ method: "GET", url: `${api.origin}${path}` }), {});
    expect(await get("/json")).toEqual({ isError: false, output: [1, 2] });
    expect(await get("/problem")).toEqual({ isError: false, output: { a: 1 } });
    expect(await get("/broken")).toEqual({ isError: false, output: "{not json" });
    expect(await get("/text")).toEqual({ isError: false, output: '{"looks": "json"}' });
  });

  test("a 500 is an error with the status and the start of the body", async () => {
    const api = serve(() => new Response(`database down${"!".repeat(5_000)}`, { status: 500 }));
    const result = await callTool(httpTool({ method: "GET", url: `${api.origin}/x` }), {});
    expect(result.isError).toBe(true);
    expect(result.output).toStartWith("HTTP 500: database down!!!");
    expect((result.output as string).length).toBeLessThan(1_100);
  });

  test("a 5 MB response is cut off at maxResponseBytes, streamed or announced; a huge one is not drained", async () => {
    const chunk = new Uint8Array(64 * 1024).fill(97);
    const streamed: Record<string, number> = { "/streamed": 0, "/huge": 0 };
    const api = serve((_request, url) => {
      if (url.pathname === "/announced") return new Response(new Uint8Array(5 * 1024 * 1024).fill(97));
      const limit = url.pathname === "/huge" ? 256 * 1024 * 1024 : 5 * 1024 * 1024;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (streamed[url.pathname]! >= limit) return controller.close();
          streamed[url.pathname]! += chunk.byteLength;
          controller.enqueue(chunk);
        },
      });
      return new Response(body, { headers: { "content-type": "text/plain" } });
    });
    const context = { maxResponseBytes: 1024 * 1024 };
    for (const path of ["/streamed", "/announced", "/huge"]) {
      const result = await callTool(httpTool({ method: "GET", url: `${api.origin}${path}` }), {}, context);
      expect(result).toEqual({ isError: true, output: "response exceeds 1048576 bytes" });
    }
    // The reader cancelled the stream: what the server produced is what the sockets buffered (~8 MB here), not 256 MB.
    await Bun.sleep(200);
    expect(streamed["/huge"]!).toBeLessThan(32 * 1024 * 1024);
  });
});

describe("http tools: timeouts and cancellation", () => {
  test("a server that never answers: the default timeout", async () => {
    const api = serve(hangUntilAborted);
    const started = performance.now();
    const result = await callTool(
      httpTool({ method: "GET", url: `${api.origin}/slow` }),
      {},
      { timeoutMs: 300 },
    );
    expect(result).toEqual({ isError: true, output: "request timed out after 0.3 s" });
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  test("the tool's own timeoutSeconds wins over the default", async () => {
    const api = serve(hangUntilAborted);
    const started = performance.now();
    const tool = httpTool({ method: "GET", url: `${api.origin}/slow` }, { timeoutSeconds: 1 });
    const result = await callTool(tool, {}, { timeoutMs: 60_000 });
    expect(result).toEqual({ isError: true, output: "request timed out after 1 s" });
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  test("a body that stops half-way also times out", async () => {
    const api = serve(
      () =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode("partial"));
            },
          }),
        ),
    );
    const result = await callTool(
      httpTool({ method: "GET", url: `${api.origin}/x` }),
      {},
      { timeoutMs: 300 },
    );
    expect(result).toEqual({ isError: true, output: "request timed out after 0.3 s" });
  });

  test("the run's signal cancels a call in flight", async () => {
    const api = serve(hangUntilAborted);
    const run = new AbortController();
    const tools = await openRunTools(
      [httpTool({ method: "GET", url: `${api.origin}/slow` })],
      testContext({ signal: run.signal }),
    );
    const pending = tools.execute({ id: "c", name: "call_api", arguments: {} }, new AbortController().signal);
    setTimeout(() => run.abort(), 50);
    expect(await pending).toEqual({ isError: true, output: "request cancelled" });
  });

  test("a refused connection is a tool error", async () => {
    const api = serve(() => new Response("ok"));
    api.stop();
    const result = await callTool(httpTool({ method: "GET", url: `${api.origin}/x` }), {});
    expect(result.isError).toBe(true);
    expect(result.output).toStartWith("request failed: ");
  });
});

describe("http tools: tenant-URL rules", () => {
  test("a private URL is refused when private URLs are not allowed; nothing reaches it", async () => {
    const api = serve(() => new Response("internal"));
    const result = await callTool(
      httpTool({ method: "GET", url: `${api.origin}/admin` }),
      {},
      { allowPrivateUrls: false },
    );
    expect(result).toEqual({
      isError: true,
      output: expect.stringContaining("request refused: url must resolve to a public address"),
    });
    expect(api.received).toHaveLength(0);
  });

  test("a redirect from a public address to a private one is refused at the hop", async () => {
    const api = serve((_request, url) =>
      url.pathname === "/start"
        ? new Response(null, { status: 302, headers: { location: `${api.origin}/secret` } })
        : new Response("internal secret"),
    );
    // The "internet": 8.8.8.8 is answered by the local server, as a public API would be.
    const internet = ((request: Request, init?: RequestInit) => {
      const url = new URL(request.url);
      if (url.hostname !== "8.8.8.8") return fetch(request, init);
      url.hostname = "127.0.0.1";
      return fetch(new Request(url.toString(), request), init);
    }) as typeof fetch;
    const port = new URL(api.origin).port;
    const tool = httpTool({ method: "GET", url: `http://8.8.8.8:${port}/start` });
    const result = await callTool(tool, {}, { allowPrivateUrls: false, fetch: internet });
    expect(result).toEqual({
      isError: true,
      output: expect.stringContaining("request refused: url must resolve to a public address"),
    });
    expect(api.received.map((request) => request.target)).toEqual(["/start"]);
  });

  test("a redirect to another origin drops the prompt's headers; one within the origin keeps them", async () => {
    const other = serve(() => new Response("elsewhere"));
    const api = serve((_request, url) => {
      if (url.pathname === "/away")
        return new Response(null, { status: 307, headers: { location: `${other.origin}/landing` } });
      if (url.pathname === "/here")
        return new Response(null, { status: 302, headers: { location: "/final" } });
      return new Response("final");
    });
    const headers = { Authorization: "Bearer {{env.KEY}}", "X-Tenant": "t1" };
    const env = { KEY: "k-1" };
    const away = await callTool(httpTool({ method: "GET", url: `${api.origin}/away`, headers }), {}, { env });
    expect(away).toEqual({ isError: false, output: "elsewhere" });
    expect(promptHeaders(other.received[0]!.headers)).toEqual({});

    const here = await callTool(httpTool({ method: "GET", url: `${api.origin}/here`, headers }), {}, { env });
    expect(here).toEqual({ isError: false, output: "final" });
    const final = api.received.find((request) => request.target === "/final")!;
    expect(promptHeaders(final.headers)).toEqual({ authorization: "Bearer k-1", "x-tenant": "t1" });
  });
});
