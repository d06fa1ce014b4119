import { expect, test } from "bun:test";
import { ApiError } from "./api-error.ts";
import { createPromptrunClient, type FetchFunction } from "./promptrun-client.ts";

const THREAD = "0190c8a0-0000-7000-8000-000000000001";

/** A fetch that answers each request with the next body and records what was asked. */
const scripted = (bodies: unknown[], status = 200) => {
  const requests: Array<{ url: URL; method: string; body: unknown }> = [];
  const fetch: FetchFunction = async (input, init) => {
    requests.push({
      url: new URL(String(input)),
      method: init?.method ?? "GET",
      body: init?.body ? JSON.parse(String(init.body)) : null,
    });
    return Response.json(bodies.shift(), { status });
  };
  return {
    requests,
    client: createPromptrunClient({ baseUrl: "http://promptrun.test", apiKey: "pr_k", fetch }),
  };
};

test("threads.messages sends channel, cursor and limit, and returns the checked page", async () => {
  const message = {
    runId: null,
    channel: "support",
    role: "user" as const,
    content: "hi",
    externalId: "m1",
    createdAt: "2026-01-01T00:00:00.000Z",
  };
  const { requests, client } = scripted([{ items: [message], nextCursor: "c2" }]);
  const page = await client.threads.messages(THREAD, { channel: "support", cursor: "c1", limit: 10 });
  expect(page).toEqual({ items: [message], nextCursor: "c2" });
  expect(requests[0]!.url.pathname).toBe(`/api/v1/threads/${THREAD}/messages`);
  expect(Object.fromEntries(requests[0]!.url.searchParams)).toEqual({
    channel: "support",
    cursor: "c1",
    limit: "10",
  });
});

test("threads.import posts the body and returns {imported, skipped}; a 400 is an ApiError", async () => {
  const body = { channel: "support", messages: [{ role: "user" as const, content: "hi", externalId: "m1" }] };
  const { requests, client } = scripted([{ imported: 1, skipped: 0 }], 201);
  expect(await client.threads.import(THREAD, body)).toEqual({ imported: 1, skipped: 0 });
  expect(requests[0]).toMatchObject({ method: "POST", body });
  const failing = scripted([{ error: "messages[0].role: invalid", code: "invalid" }], 400);
  const error = await failing.client.threads
    .import(THREAD, { messages: [{ role: "user", content: "x" }] })
    .catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(ApiError);
  expect(error).toMatchObject({ status: 400 });
});
