import { describe, expect, test } from "bun:test";
import { createPromptrunTrpcClient } from "./trpc-client.ts";

const runId = "0196f3c1-1f0e-7a3b-8b7c-1234567890ab";

describe("createPromptrunTrpcClient", () => {
  test("calls run.get with the token as bearer and returns the typed result", async () => {
    const requests: Array<{ url: string; authorization: string | null }> = [];
    let tokenCalls = 0;
    const client = createPromptrunTrpcClient({
      url: "https://promptrun.example/trpc",
      getToken: async () => `token-${++tokenCalls}`,
      fetch: async (input, init) => {
        requests.push({ url: String(input), authorization: new Headers(init?.headers).get("authorization") });
        return Response.json({ result: { data: { id: runId, status: "pending" } } });
      },
    });
    const run = await client.run.get.query({ id: runId });
    expect(run.id).toBe(runId);
    expect(run.status).toBe("pending");
    await client.run.get.query({ id: runId });
    expect(requests[0]?.url).toStartWith("https://promptrun.example/trpc/run.get?input=");
    expect(decodeURIComponent(requests[0]?.url.split("input=")[1] ?? "")).toBe(JSON.stringify({ id: runId }));
    // A fresh token per request: an expired one is replaced by the next call.
    expect(requests.map((request) => request.authorization)).toEqual(["Bearer token-1", "Bearer token-2"]);
  });

  test("a tRPC error surfaces as a TRPCClientError with the server's message", async () => {
    const client = createPromptrunTrpcClient({
      url: "https://promptrun.example/trpc",
      getToken: () => "t",
      fetch: async () =>
        Response.json(
          { error: { message: "run not found", code: -32004, data: { code: "NOT_FOUND", httpStatus: 404 } } },
          { status: 404 },
        ),
    });
    const error = await client.run.get.query({ id: runId }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "TRPCClientError", message: "run not found" });
  });
});
