import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { PromptFileInput } from "@promptrun/contract";
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import { type ApiTestKit, createApiTestKit } from "../sse/testing/api-test-kit.ts";
import type { AppRouter } from "./index.ts";

const greet = {
  slug: "greet",
  model: "dev:echo",
  inputs: { name: { type: "string" } },
  messages: [
    { role: "system", content: "Sign as {{env.BRAND}}." },
    { role: "user", content: "Say hello to {{name}}." },
  ],
} satisfies PromptFileInput;

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

async function codeOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TRPCClientError) return error.data?.code;
    throw error;
  }
  throw new Error("expected the call to fail");
}

describe("tRPC run.messages", () => {
  let kit: ApiTestKit;
  let clientA: ReturnType<typeof clientWith>;
  beforeEach(async () => {
    kit = await createApiTestKit();
    clientA = clientWith(kit, kit.tenantA.apiKey);
    await clientA.prompt.push.mutate({ files: [greet] });
  });
  afterEach(() => kit.close());

  test("the service's answer (as on REST); another tenant NOT_FOUND; a stream token, even of the run's thread, UNAUTHORIZED", async () => {
    const { id, thread } = await clientA.run.create.mutate({
      slug: "greet",
      version: "latest",
      inputs: { name: "Ada" },
      envVars: { BRAND: "brand-secret-value" },
    });
    const answer = await clientA.run.messages.query({ id });
    expect(answer).toEqual({
      messages: [
        { role: "system", content: "Sign as [env:BRAND]." },
        { role: "user", content: "Say hello to Ada." },
      ],
      memory: null,
    });
    // The service REST answers with.
    const fromService: unknown = await kit.services.runs.messages(kit.tenantA.id, id);
    expect(fromService).toEqual(answer);

    expect(await codeOf(clientWith(kit, kit.tenantB.apiKey).run.messages.query({ id }))).toBe("NOT_FOUND");
    const { token } = await clientA.thread.streamToken.mutate({ thread });
    const browser = clientWith(kit, token);
    expect((await browser.run.get.query({ id })).id).toBe(id);
    expect(await codeOf(browser.run.messages.query({ id }))).toBe("UNAUTHORIZED");
    expect(await codeOf(clientA.run.messages.query({ id: "not-a-uuid" }))).toBe("BAD_REQUEST");
  });
});
