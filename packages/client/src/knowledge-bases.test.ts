import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import type { KnowledgeDocument } from "@promptrun/contract";
import { ApiError } from "./api-error.ts";
import { DocumentFailedError } from "./knowledge-bases.ts";
import { createPromptrunClient } from "./promptrun-client.ts";

interface Seen {
  method: string;
  path: string;
  contentType: string | null;
  authorization: string | null;
  json?: unknown;
  form?: { file?: { name: string; type: string; text: string }; fields: Record<string, string> };
}
const seen: Seen[] = [];
let reply: (request: Request) => Response = () => new Response(null, { status: 204 });

const KB = {
  id: "0196f3c1-1f0e-7a3b-8b7c-1234567890ab",
  slug: "docs",
  description: null,
  embeddingModel: "dev:hash",
  chunking: { maxTokens: 512, overlap: 64 },
  documentCount: 0,
  chunkCount: 0,
  bytes: 0,
  createdAt: "2026-01-01T00:00:00.000Z",
};
const DOC_ID = "0196f3c1-1f0e-7a3b-8b7c-1234567890ac";
const doc = (status: KnowledgeDocument["status"], error: string | null = null): KnowledgeDocument => ({
  id: DOC_ID,
  knowledgeBase: "docs",
  externalId: null,
  filename: "a.pdf",
  mediaType: "application/pdf",
  metadata: {},
  status,
  error,
  bytes: 10,
  chunkCount: status === "ready" ? 2 : 0,
  tokens: 0,
  cost: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  readyAt: status === "ready" ? "2026-01-01T00:00:01.000Z" : null,
});

async function record(request: Request): Promise<Seen> {
  const url = new URL(request.url);
  const contentType = request.headers.get("content-type");
  const entry: Seen = {
    method: request.method,
    path: url.pathname + url.search,
    contentType,
    authorization: request.headers.get("authorization"),
  };
  if (contentType?.startsWith("multipart/form-data")) {
    const form = await request.formData();
    const fields: Record<string, string> = {};
    let file: { name: string; type: string; text: string } | undefined;
    for (const [name, value] of form) {
      if (typeof value === "string") fields[name] = value;
      else file = { name: value.name, type: value.type, text: await value.text() };
    }
    entry.form = { fields, ...(file ? { file } : {}) };
  } else if (contentType?.startsWith("application/json")) {
    entry.json = await request.json();
  }
  return entry;
}

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    seen.push(await record(request.clone() as unknown as Request));
    return reply(request);
  },
});
afterAll(() => server.stop(true));
beforeEach(() => {
  seen.length = 0;
});

const client = () =>
  createPromptrunClient({ baseUrl: `http://127.0.0.1:${server.port}`, apiKey: "pr_test" }).knowledgeBases;

describe("client.knowledgeBases", () => {
  test("create POSTs JSON and returns the knowledge base; list sends cursor and limit", async () => {
    reply = () => Response.json(KB, { status: 201 });
    expect(await client().create({ slug: "docs", chunking: { maxTokens: 512 } })).toEqual(KB);
    expect(seen[0]).toMatchObject({
      method: "POST",
      path: "/api/v1/knowledge-bases",
      authorization: "Bearer pr_test",
      json: { slug: "docs", chunking: { maxTokens: 512 } },
    });
    reply = () => Response.json({ items: [KB], nextCursor: "c2" });
    const page = await client().list({ cursor: "c1", limit: 10 });
    expect(page.nextCursor).toBe("c2");
    expect(seen[1]?.path).toBe("/api/v1/knowledge-bases?cursor=c1&limit=10");
  });

  test("get, delete (204); a 404 becomes ApiError not_found", async () => {
    reply = () => Response.json(KB);
    expect((await client().get("docs")).slug).toBe("docs");
    reply = () => new Response(null, { status: 204 });
    await client().delete("docs");
    expect(seen[1]).toMatchObject({ method: "DELETE", path: "/api/v1/knowledge-bases/docs" });
    reply = () =>
      Response.json({ error: "knowledge base 'docs' not found", code: "not_found" }, { status: 404 });
    const error = await client()
      .get("docs")
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 404,
      code: "not_found",
      message: "knowledge base 'docs' not found",
    });
    const deleteError = await client()
      .delete("docs")
      .catch((caught: unknown) => caught);
    expect(deleteError).toMatchObject({ status: 404, code: "not_found" });
  });

  test("documents.add sends a file as multipart: name, type, metadata, externalId", async () => {
    reply = () => Response.json({ id: DOC_ID, status: "pending" }, { status: 202 });
    const file = new File(["%PDF-1.7 hello"], "report.pdf", { type: "application/pdf" });
    const accepted = await client()
      .documents("docs")
      .add({ file, metadata: { team: "support" }, externalId: "ext-1" });
    expect(accepted).toEqual({ id: DOC_ID, status: "pending" });
    expect(seen[0]?.path).toBe("/api/v1/knowledge-bases/docs/documents");
    expect(seen[0]?.contentType).toStartWith("multipart/form-data; boundary=");
    expect(seen[0]?.form).toEqual({
      file: { name: "report.pdf", type: "application/pdf", text: "%PDF-1.7 hello" },
      fields: { metadata: '{"team":"support"}', externalId: "ext-1" },
    });
  });

  test("documents.add: a Blob takes `filename`; without one it is refused before sending", async () => {
    reply = () => Response.json({ id: DOC_ID, status: "pending" }, { status: 202 });
    await client()
      .documents("docs")
      .add({ file: new Blob(["# hi"]), filename: "notes.md", mediaType: "text/markdown" });
    expect(seen[0]?.form?.file).toMatchObject({ name: "notes.md", text: "# hi" });
    expect(() =>
      client()
        .documents("docs")
        .add({ file: new Blob(["x"]) }),
    ).toThrow("filename");
    expect(seen).toHaveLength(1);
  });

  test("documents.add sends text as JSON; a 413 becomes ApiError payload_too_large", async () => {
    reply = () => Response.json({ id: DOC_ID, status: "pending" }, { status: 202 });
    await client()
      .documents("docs")
      .add({ text: "hello", filename: "a.md", metadata: { a: "1" } });
    expect(seen[0]).toMatchObject({
      contentType: "application/json",
      json: { text: "hello", filename: "a.md", metadata: { a: "1" } },
    });
    reply = () => Response.json({ error: "too big", code: "payload_too_large" }, { status: 413 });
    const error = await client()
      .documents("docs")
      .add({ file: new File(["x"], "a.txt") })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 413, code: "payload_too_large" });
  });

  test("documents.list/get/delete", async () => {
    reply = () => Response.json({ items: [doc("ready")], nextCursor: null });
    const page = await client().documents("docs").list({ status: "ready", limit: 5 });
    expect(page.items[0]?.status).toBe("ready");
    expect(seen[0]?.path).toBe("/api/v1/knowledge-bases/docs/documents?status=ready&limit=5");
    reply = () => Response.json(doc("pending"));
    expect((await client().documents("docs").get(DOC_ID)).status).toBe("pending");
    expect(seen[1]?.path).toBe(`/api/v1/knowledge-bases/docs/documents/${DOC_ID}`);
    reply = () => new Response(null, { status: 204 });
    await client().documents("docs").delete(DOC_ID);
    expect(seen[2]?.method).toBe("DELETE");
  });

  test("waitUntilReady polls past pending and a 503 until ready", async () => {
    const answers = [
      () => Response.json(doc("pending")),
      () => Response.json({ error: "busy", code: "unavailable" }, { status: 503 }),
      () => Response.json(doc("processing")),
      () => Response.json(doc("ready")),
    ];
    reply = () => (answers.shift() ?? answers[0] ?? (() => Response.json(doc("ready"))))();
    const ready = await client().waitUntilReady("docs", DOC_ID, { intervalMs: 5 });
    expect(ready.status).toBe("ready");
    expect(seen).toHaveLength(4);
  });

  test("waitUntilReady: a failed document throws DocumentFailedError; a timeout ApiError timeout", async () => {
    reply = () => Response.json(doc("failed", "the PDF has no text layer"));
    const failed = await client()
      .waitUntilReady("docs", DOC_ID, { intervalMs: 5 })
      .catch((caught: unknown) => caught);
    expect(failed).toBeInstanceOf(DocumentFailedError);
    expect((failed as DocumentFailedError).document.error).toBe("the PDF has no text layer");
    reply = () => Response.json(doc("pending"));
    const timedOut = await client()
      .waitUntilReady("docs", DOC_ID, { intervalMs: 5, timeoutMs: 30 })
      .catch((caught: unknown) => caught);
    expect(timedOut).toMatchObject({ code: "timeout" });
  });

  test("search POSTs the request and returns the hits", async () => {
    const hit = {
      chunkId: "0196f3c1-1f0e-7a3b-8b7c-1234567890ad",
      documentId: DOC_ID,
      filename: "a.pdf",
      text: "refunds take five days",
      score: 0.03,
      metadata: {},
    };
    reply = () => Response.json({ items: [hit] });
    const result = await client().search("docs", { query: "refund", topK: 3, filter: { team: "support" } });
    expect(result.items).toEqual([hit]);
    expect(seen[0]).toMatchObject({
      method: "POST",
      path: "/api/v1/knowledge-bases/docs/search",
      json: { query: "refund", topK: 3, filter: { team: "support" } },
    });
  });
});
