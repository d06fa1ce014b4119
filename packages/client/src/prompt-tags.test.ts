import { afterAll, describe, expect, test } from "bun:test";
import { ApiError } from "./api-error.ts";
import { createPromptrunClient } from "./promptrun-client.ts";

const seen: Array<{ method: string; path: string; body: string }> = [];
let reply: () => Response = () =>
  Response.json({ slug: "greet", tag: "prod", version: 2, previousVersion: 1 });
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    seen.push({ method: request.method, path: new URL(request.url).pathname, body: await request.text() });
    return reply();
  },
});
afterAll(() => server.stop(true));

const client = () => createPromptrunClient({ baseUrl: `http://127.0.0.1:${server.port}`, apiKey: "pr_test" });

describe("client.prompts tag calls", () => {
  test("setTag PUTs the body to /prompts/{slug}/tags/{tag}, and returns the move", async () => {
    reply = () => Response.json({ slug: "greet", tag: "blue_green", version: 2, previousVersion: null });
    const moved = await client().prompts.setTag("greet", "blue_green", { version: 2, expectedVersion: null });
    expect(moved).toEqual({ slug: "greet", tag: "blue_green", version: 2, previousVersion: null });
    expect(seen.at(-1)).toEqual({
      method: "PUT",
      path: "/api/v1/prompts/greet/tags/blue_green",
      body: JSON.stringify({ version: 2, expectedVersion: null }),
    });
  });

  test("a 409 becomes an ApiError with code conflict", async () => {
    reply = () =>
      Response.json(
        { error: "tag 'prod' of prompt 'greet' points at version 3", code: "conflict" },
        { status: 409 },
      );
    const error = await client()
      .prompts.setTag("greet", "prod", { version: 2, expectedVersion: 1 })
      .catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(409);
    expect((error as ApiError).message).toContain("points at version 3");
  });

  test("tagHistory GETs …/history with cursor and limit and returns the page", async () => {
    const page = {
      items: [{ version: null, previousVersion: 2, movedAt: "2026-01-01T00:00:00.000Z", movedBy: "cli" }],
      nextCursor: null,
    };
    reply = () => Response.json(page);
    expect(await client().prompts.tagHistory("greet", "prod", { cursor: "abc", limit: 5 })).toEqual(page);
    expect(seen.at(-1)).toMatchObject({ method: "GET", path: "/api/v1/prompts/greet/tags/prod/history" });
  });

  test("deleteTag sends DELETE and resolves on 204; a 404 throws", async () => {
    reply = () => new Response(null, { status: 204 });
    expect(await client().prompts.deleteTag("greet", "prod")).toBeUndefined();
    expect(seen.at(-1)).toMatchObject({ method: "DELETE", path: "/api/v1/prompts/greet/tags/prod" });
    reply = () =>
      Response.json({ error: "tag 'prod' of prompt 'greet' not found", code: "not_found" }, { status: 404 });
    const error = await client()
      .prompts.deleteTag("greet", "prod")
      .catch((e) => e);
    expect((error as ApiError).status).toBe(404);
  });
});
