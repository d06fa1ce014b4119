import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { PromptFileInput } from "@promptrun/contract";
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import { pauseRun } from "../http/test-paused-run.ts";
import { type ApiTestKit, createApiTestKit } from "../sse/testing/api-test-kit.ts";
import type { AppRouter } from "./index.ts";

const greet = {
  slug: "greet",
  model: "dev:echo",
  inputs: { name: { type: "string" } },
  messages: [{ role: "user", content: "Say hello to {{name}}." }],
} satisfies PromptFileInput;

const answers = [
  { toolCallId: "call_order", output: { status: "shipped" } },
  { toolCallId: "call_time", output: "12:00" },
];

type LinkFetch = NonNullable<Parameters<typeof httpBatchLink>[0]["fetch"]>;

/** A typed client calling the tRPC handler in-process, with `authorization: Bearer <credential>`. */
const clientWith = (kit: ApiTestKit, credential: string) =>
  createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: "http://local/trpc",
        headers: { authorization: `Bearer ${credential}` },
        fetch: ((url: string | URL, init?: RequestInit) =>
          kit.trpc(new Request(String(url), init))) as unknown as LinkFetch,
      }),
    ],
  });

async function codeOf(promise: Promise<unknown>): Promise<{ code: unknown; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TRPCClientError) return { code: error.data?.code, message: error.message };
    throw error;
  }
  throw new Error("expected the call to fail");
}

describe("tRPC run.submitToolOutputs", () => {
  let kit: ApiTestKit;
  let clientA: ReturnType<typeof clientWith>;
  beforeEach(async () => {
    kit = await createApiTestKit();
    clientA = clientWith(kit, kit.tenantA.apiKey);
    await clientA.prompt.push.mutate({ files: [greet] });
  });
  afterEach(() => kit.close());

  const pausedRun = async () => {
    const created = await clientA.run.create.mutate({
      slug: "greet",
      version: "latest",
      inputs: { name: "A" },
    });
    await pauseRun(kit.store, kit.tenantA.id, created.id, kit.clock.now());
    return created;
  };

  test("answers a paused run as REST does; an idempotency key replays", async () => {
    const { id, thread } = await pausedRun();
    const input = { id, toolOutputs: answers, idempotencyKey: "t-1" };
    expect(await clientA.run.submitToolOutputs.mutate(input)).toEqual({ id, thread });
    expect(await clientA.run.submitToolOutputs.mutate(input)).toEqual({ id, thread });
    const stored = await kit.store.runs.get(kit.tenantA.id, id);
    expect(stored?.pause).toBeNull();
    expect(stored?.steps[0]?.toolResults).toHaveLength(2);
    expect(await codeOf(clientA.run.submitToolOutputs.mutate({ id, toolOutputs: answers }))).toEqual({
      code: "CONFLICT",
      message: "run is pending (phase running), not waiting for tool outputs",
    });
  });

  test("input and ids are checked: BAD_REQUEST naming the field", async () => {
    const { id } = await pausedRun();
    expect(
      await codeOf(clientA.run.submitToolOutputs.mutate({ id, toolOutputs: [answers[0]!, answers[0]!] })),
    ).toEqual({ code: "BAD_REQUEST", message: "toolOutputs[1].toolCallId: 'call_order' is repeated" });
    expect(await codeOf(clientA.run.submitToolOutputs.mutate({ id, toolOutputs: [answers[1]!] }))).toEqual({
      code: "BAD_REQUEST",
      message: "toolOutputs: no output for 'call_order' (lookup_order)",
    });
    const empty = await codeOf(clientA.run.submitToolOutputs.mutate({ id, toolOutputs: [] }));
    expect(empty.code).toBe("BAD_REQUEST");
  });

  test("another tenant gets NOT_FOUND; a stream token, even of the run's thread, UNAUTHORIZED", async () => {
    const { id, thread } = await pausedRun();
    const clientB = clientWith(kit, kit.tenantB.apiKey);
    expect((await codeOf(clientB.run.submitToolOutputs.mutate({ id, toolOutputs: answers }))).code).toBe(
      "NOT_FOUND",
    );
    const { token } = await clientA.thread.streamToken.mutate({ thread });
    const browser = clientWith(kit, token);
    // The token does read the run (run.get), but may not answer its tools.
    expect((await browser.run.get.query({ id })).id).toBe(id);
    const refused = await codeOf(browser.run.submitToolOutputs.mutate({ id, toolOutputs: answers }));
    expect(refused.code).toBe("UNAUTHORIZED");
    expect(refused.message).toContain("stream token");
    expect((await kit.store.runs.get(kit.tenantA.id, id))?.pause?.step).toBe(0);
  });
});
