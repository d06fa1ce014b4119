import { afterEach, describe, expect, test } from "bun:test";
import type { FakeProviderServer } from "./fake-provider-server.ts";
import { startFakeAnthropic, startFakeOpenAI } from "./index.ts";

const servers: FakeProviderServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

const post = (server: FakeProviderServer, path: string, body: unknown) =>
  fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("fake providers", () => {
  test("OpenAI: chunks, then the usage chunk only when include_usage is asked, then [DONE]", async () => {
    const server = startFakeOpenAI({
      type: "stream",
      tokens: ["a", "b"],
      usage: { input: 9, cachedInput: 4, output: 2, reasoning: 1 },
    });
    servers.push(server);
    const withUsage = await (
      await post(server, "/chat/completions", { model: "m", stream_options: { include_usage: true } })
    ).text();
    expect(withUsage).toContain('"delta":{"content":"a"}');
    expect(withUsage).toContain('"prompt_tokens_details":{"cached_tokens":4}');
    expect(withUsage).toContain('"completion_tokens_details":{"reasoning_tokens":1}');
    expect(withUsage.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const withoutUsage = await (await post(server, "/chat/completions", { model: "m" })).text();
    expect(withoutUsage).not.toContain("prompt_tokens");
    expect(server.requests.map((request) => request.body)).toEqual([
      { model: "m", stream_options: { include_usage: true } },
      { model: "m" },
    ]);
    expect(server.streams.map((stream) => stream.outcome)).toEqual(["completed", "completed"]);
  });

  test("Anthropic: message_start with cache reads, text deltas, message_delta usage, message_stop", async () => {
    const server = startFakeAnthropic({
      type: "stream",
      tokens: ["hi"],
      usage: { input: 10, cachedInput: 6, output: 3 },
    });
    servers.push(server);
    const text = await (await post(server, "/messages", { model: "claude" })).text();
    const names = [...text.matchAll(/^event: (\S+)$/gm)].map((match) => match[1]);
    expect(names).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(text).toContain('"input_tokens":4,"cache_read_input_tokens":6');
    expect(text).toContain('"delta":{"type":"text_delta","text":"hi"}');
  });

  test("errors carry their status and Retry-After", async () => {
    const server = startFakeOpenAI({ type: "error", status: 429, retryAfter: "3", message: "slow down" });
    servers.push(server);
    const response = await post(server, "/chat/completions", {});
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("3");
    expect(await response.json()).toMatchObject({ error: { message: "slow down" } });
  });

  test("a hanging stream stays open until the server closes", async () => {
    const server = startFakeOpenAI({ type: "stream", tokens: ["x", "y"], hangAfterTokens: 1 });
    servers.push(server);
    const response = await post(server, "/chat/completions", {});
    const reader = response.body!.getReader();
    await reader.read();
    expect(server.openStreams()).toBe(1);
    const rest = (async () => {
      try {
        while (!(await reader.read()).done) {}
        return "ended";
      } catch {
        return "reset";
      }
    })();
    await server.close();
    expect(["ended", "reset"]).toContain(await rest);
    expect(server.streams[0]!.outcome).toBe("server-closed");
    expect(server.openStreams()).toBe(0);
  });

  test("a cut stream resets the connection mid-response", async () => {
    const server = startFakeOpenAI({
      type: "stream",
      tokens: ["x", "y", "z"],
      cutAfterTokens: 1,
      tokenDelayMs: 10,
    });
    servers.push(server);
    const response = await post(server, "/chat/completions", {});
    await expect(response.text()).rejects.toThrow();
    expect(server.streams[0]!.outcome).toBe("cut");
  });
});
