import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import { createTestApp, type TestApp } from "../http/test-app.ts";
import {
  createFakeKnowledgeService,
  type FakeKnowledgeService,
} from "../rest/knowledge-bases/testing/fake-knowledge-service.ts";
import type { AppRouter } from "./index.ts";

type LinkFetch = NonNullable<Parameters<typeof httpBatchLink>[0]["fetch"]>;

let t: TestApp;
let fake: FakeKnowledgeService;

const clientWith = (key: string) =>
  createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: "http://localhost/trpc",
        headers: { authorization: `Bearer ${key}` },
        fetch: ((url: string | URL, init?: RequestInit) =>
          t.app.fetch(new Request(String(url), init))) as unknown as LinkFetch,
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

beforeAll(async () => {
  t = await createTestApp({
    wrapServices: (services) => ({
      ...services,
      get knowledge() {
        return fake;
      },
    }),
  });
});
afterAll(async () => {
  await t.dispose();
});
beforeEach(() => {
  fake = createFakeKnowledgeService();
});

describe("tRPC knowledgeBase.*", () => {
  test("create, list, get, delete for the caller's tenant", async () => {
    const a = clientWith(t.keys.a);
    const created = await a.knowledgeBase.create.mutate({ slug: "docs", chunking: { maxTokens: 128 } });
    expect(created).toMatchObject({ slug: "docs", chunking: { maxTokens: 128, overlap: 64 } });
    expect(fake.calls[0]).toMatchObject({ method: "create", tenantId: t.tenants.a });
    expect((await a.knowledgeBase.list.query({ limit: 10 })).items.map((kb) => kb.slug)).toEqual(["docs"]);
    expect(await a.knowledgeBase.get.query({ knowledgeBase: "docs" })).toMatchObject({ slug: "docs" });
    expect(await codeOf(clientWith(t.keys.b).knowledgeBase.get.query({ knowledgeBase: "docs" }))).toBe(
      "NOT_FOUND",
    );
    expect(await a.knowledgeBase.delete.mutate({ knowledgeBase: "docs" })).toEqual({ deleted: true });
    expect(await codeOf(a.knowledgeBase.get.query({ knowledgeBase: "docs" }))).toBe("NOT_FOUND");
  });

  test("addText passes UTF-8 bytes and fields; documents are listed, read and deleted", async () => {
    const a = clientWith(t.keys.a);
    await a.knowledgeBase.create.mutate({ slug: "docs" });
    const accepted = await a.knowledgeBase.addText.mutate({
      knowledgeBase: "docs",
      text: "héllo",
      filename: "a.md",
      metadata: { team: "x" },
      externalId: "e1",
    });
    expect(accepted.status).toBe("pending");
    expect(fake.uploads[0]).toMatchObject({ filename: "a.md", metadata: { team: "x" }, externalId: "e1" });
    expect(fake.uploads[0]?.content).toEqual(new TextEncoder().encode("héllo"));
    const page = await a.knowledgeBase.listDocuments.query({ knowledgeBase: "docs", status: "pending" });
    expect(page.items.map((doc) => doc.id)).toEqual([accepted.id]);
    const document = await a.knowledgeBase.getDocument.query({ knowledgeBase: "docs", id: accepted.id });
    expect(document.filename).toBe("a.md");
    await a.knowledgeBase.deleteDocument.mutate({ knowledgeBase: "docs", id: accepted.id });
    expect(await codeOf(a.knowledgeBase.getDocument.query({ knowledgeBase: "docs", id: accepted.id }))).toBe(
      "NOT_FOUND",
    );
  });

  test("search; topK over 50 and bad input are BAD_REQUEST; no key UNAUTHORIZED; inactive FORBIDDEN", async () => {
    const a = clientWith(t.keys.a);
    await a.knowledgeBase.create.mutate({ slug: "docs" });
    await a.knowledgeBase.addText.mutate({ knowledgeBase: "docs", text: "refunds", filename: "a.txt" });
    const result = await a.knowledgeBase.search.query({
      knowledgeBase: "docs",
      request: { query: "refund" },
    });
    expect(result.items).toHaveLength(1);
    expect(fake.calls.at(-1)).toMatchObject({
      method: "search",
      args: ["docs", { query: "refund", topK: 5, mode: "hybrid" }],
    });
    expect(
      await codeOf(
        a.knowledgeBase.search.query({ knowledgeBase: "docs", request: { query: "x", topK: 10_000 } }),
      ),
    ).toBe("BAD_REQUEST");
    expect(await codeOf(a.knowledgeBase.get.query({ knowledgeBase: "../x" }))).toBe("BAD_REQUEST");
    expect(await codeOf(clientWith("nope").knowledgeBase.list.query({}))).toBe("UNAUTHORIZED");
    expect(await codeOf(clientWith(t.keys.inactive).knowledgeBase.create.mutate({ slug: "x" }))).toBe(
      "FORBIDDEN",
    );
  });
});
