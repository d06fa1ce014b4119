import { afterAll, describe, expect, test } from "bun:test";
import type { RenderedPrompt } from "@promptrun/contract";
import { ApiError } from "./api-error.ts";
import { createPromptrunClient } from "./promptrun-client.ts";

const rendered: RenderedPrompt = {
  model: "dev:echo",
  params: {},
  messages: [
    { role: "system", content: "Key [env:SECRET]" },
    { role: "user", content: "Hi Ada" },
  ],
  tools: [],
  output: null,
  providerOptions: null,
  memory: { messages: 0, dropped: 0 },
};

const seen: Array<{ method: string; path: string; authorization: string | null; body: unknown }> = [];
let reply: () => Response = () => Response.json(rendered);
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    seen.push({
      method: request.method,
      path: new URL(request.url).pathname,
      authorization: request.headers.get("authorization"),
      body: await request.json(),
    });
    return reply();
  },
});
afterAll(() => server.stop(true));

const client = () => createPromptrunClient({ baseUrl: `http://127.0.0.1:${server.port}`, apiKey: "pr_test" });

describe("client.prompts.render", () => {
  test("POSTs the body to /prompts/{slug}/{version}/render, segments encoded, and returns the rendered request", async () => {
    const body = {
      inputs: { name: "Ada" },
      thread: "0190f1f0-0000-7000-8000-0000000000aa",
      channel: "support",
    };
    expect(await client().prompts.render("greet", "my tag", body)).toEqual(rendered);
    expect(await client().prompts.render("greet", 3, { inputs: {} })).toEqual(rendered);
    expect(seen.slice(-2)).toEqual([
      {
        method: "POST",
        path: "/api/v1/prompts/greet/my%20tag/render",
        authorization: "Bearer pr_test",
        body,
      },
      {
        method: "POST",
        path: "/api/v1/prompts/greet/3/render",
        authorization: "Bearer pr_test",
        body: { inputs: {} },
      },
    ]);
  });

  test("a 400 is an ApiError with the server's message; an answer off the contract is invalid_response", async () => {
    reply = () =>
      Response.json({ error: "missing required input: inputs.name", code: "invalid" }, { status: 400 });
    const refused = await client()
      .prompts.render("greet", "latest", { inputs: {} })
      .catch((error: unknown) => error);
    expect(ApiError.isInstance(refused)).toBe(true);
    expect(refused).toMatchObject({
      status: 400,
      code: "invalid",
      message: "missing required input: inputs.name",
    });
    reply = () => Response.json({ ...rendered, tools: [{ name: "x" }] });
    const strange = await client()
      .prompts.render("greet", "latest", { inputs: {} })
      .catch((error: unknown) => error);
    expect(strange).toMatchObject({ code: "invalid_response" });
  });
});
