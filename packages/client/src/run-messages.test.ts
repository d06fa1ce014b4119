import { afterAll, describe, expect, test } from "bun:test";
import type { RunMessages } from "@promptrun/contract";
import { ApiError } from "./api-error.ts";
import { createPromptrunClient } from "./promptrun-client.ts";

const answer: RunMessages = {
  messages: [
    { role: "system", content: "Sign as [env:BRAND]." },
    { role: "user", content: "Hi" },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", name: "look", arguments: {} }] },
    {
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "c1", name: "look", output: 1, isError: false }],
    },
    { role: "user", content: "And now?" },
  ],
  memory: { messages: 3, dropped: 1 },
};

const seen: Array<{ method: string; path: string; authorization: string | null }> = [];
let reply: () => Response = () => Response.json(answer);
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(request) {
    seen.push({
      method: request.method,
      path: new URL(request.url).pathname,
      authorization: request.headers.get("authorization"),
    });
    return reply();
  },
});
afterAll(() => server.stop(true));

const client = () => createPromptrunClient({ baseUrl: `http://127.0.0.1:${server.port}`, apiKey: "pr_test" });

describe("client.runs.messages", () => {
  test("GETs /promptruns/{id}/messages, the id encoded, and returns the run's messages", async () => {
    const id = "0190f1f0-0000-7000-8000-0000000000aa";
    expect(await client().runs.messages(id)).toEqual(answer);
    reply = () => Response.json({ messages: [{ role: "user", content: "Hi" }], memory: null });
    expect(await client().runs.messages("a/b")).toEqual({
      messages: [{ role: "user", content: "Hi" }],
      memory: null,
    });
    expect(seen.slice(-2)).toEqual([
      { method: "GET", path: `/api/v1/promptruns/${id}/messages`, authorization: "Bearer pr_test" },
      { method: "GET", path: "/api/v1/promptruns/a%2Fb/messages", authorization: "Bearer pr_test" },
    ]);
  });

  test("a 404 is an ApiError not_found; an answer off the contract is invalid_response", async () => {
    reply = () => Response.json({ error: "run 'x' not found", code: "not_found" }, { status: 404 });
    const missing = await client()
      .runs.messages(crypto.randomUUID())
      .catch((error: unknown) => error);
    expect(ApiError.isInstance(missing)).toBe(true);
    expect(missing).toMatchObject({ status: 404, code: "not_found", message: "run 'x' not found" });
    reply = () => Response.json({ messages: [{ role: "robot", content: "?" }], memory: null });
    const strange = await client()
      .runs.messages(crypto.randomUUID())
      .catch((error: unknown) => error);
    expect(strange).toMatchObject({ code: "invalid_response" });
  });
});
