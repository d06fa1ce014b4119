import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../http/test-app.ts";
import { createFakeKnowledgeService, type FakeKnowledgeService } from "./testing/fake-knowledge-service.ts";
import { UPLOAD_ENVELOPE_BYTES } from "./upload.ts";

const MAX_UPLOAD = 4096;
const BODY_CAP = MAX_UPLOAD + UPLOAD_ENVELOPE_BYTES;
let t: TestApp;
let fake: FakeKnowledgeService;

beforeAll(async () => {
  t = await createTestApp({
    api: { maxUploadBytes: MAX_UPLOAD, maxBodyBytes: 1024 },
    // A getter: each test gets a fresh fake.
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
beforeEach(async () => {
  fake = createFakeKnowledgeService();
  await fake.create(t.tenants.a, { slug: "docs" });
  fake.calls.length = 0;
});

const upload = (form: FormData, key = t.keys.a, slug = "docs") =>
  t.request(`/api/v1/knowledge-bases/${slug}/documents`, { method: "POST", key, body: form });

describe("knowledge bases", () => {
  test("create → 201 with Location; the same slug again → 409; a bad body → 400", async () => {
    const created = await t.request("/api/v1/knowledge-bases", {
      method: "POST",
      key: t.keys.a,
      json: { slug: "handbook", chunking: { maxTokens: 256 } },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe("/api/v1/knowledge-bases/handbook");
    expect(await created.json()).toMatchObject({ slug: "handbook", embeddingModel: "dev:hash" });
    expect(fake.calls[0]).toMatchObject({ method: "create", tenantId: t.tenants.a });
    const again = await t.request("/api/v1/knowledge-bases", {
      method: "POST",
      key: t.keys.a,
      json: { slug: "handbook" },
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: "conflict", error: expect.any(String) });
    const bad = await t.request("/api/v1/knowledge-bases", {
      method: "POST",
      key: t.keys.a,
      json: { slug: 3 },
    });
    expect(bad.status).toBe(400);
  });

  test("create: 401 without key, 403 inactive, 415 not JSON", async () => {
    expect((await t.request("/api/v1/knowledge-bases", { method: "POST", json: { slug: "x" } })).status).toBe(
      401,
    );
    const inactive = await t.request("/api/v1/knowledge-bases", {
      method: "POST",
      key: t.keys.inactive,
      json: { slug: "x" },
    });
    expect(inactive.status).toBe(403);
    const text = await t.request("/api/v1/knowledge-bases", {
      method: "POST",
      key: t.keys.a,
      headers: { "content-type": "text/plain" },
      body: "slug=x",
    });
    expect(text.status).toBe(415);
    expect(fake.calls).toHaveLength(0);
  });

  test("list pages with cursor and limit; a bad limit is a 400", async () => {
    await fake.create(t.tenants.a, { slug: "second" });
    const first = await t.request("/api/v1/knowledge-bases?limit=1", { key: t.keys.a });
    expect(first.status).toBe(200);
    const page = (await first.json()) as { items: { slug: string }[]; nextCursor: string };
    expect(page.items.map((kb) => kb.slug)).toEqual(["docs"]);
    const next = await t.request(`/api/v1/knowledge-bases?limit=1&cursor=${page.nextCursor}`, {
      key: t.keys.a,
    });
    expect(((await next.json()) as { items: { slug: string }[] }).items[0]?.slug).toBe("second");
    expect((await t.request("/api/v1/knowledge-bases?limit=0", { key: t.keys.a })).status).toBe(400);
    expect((await t.request("/api/v1/knowledge-bases?nope=1", { key: t.keys.a })).status).toBe(400);
  });

  test("get 200; another tenant's, unknown and malformed slugs are 404", async () => {
    const found = await t.request("/api/v1/knowledge-bases/docs", { key: t.keys.a });
    expect(found.status).toBe(200);
    expect(await found.json()).toMatchObject({ slug: "docs", documentCount: 0 });
    const other = await t.request("/api/v1/knowledge-bases/docs", { key: t.keys.b });
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ code: "not_found" });
    expect((await t.request("/api/v1/knowledge-bases/..%2Fetc", { key: t.keys.a })).status).toBe(404);
    expect((await t.request("/api/v1/knowledge-bases/Not_A_Slug!", { key: t.keys.a })).status).toBe(404);
  });

  test("delete 204, then 404; tenant B cannot delete A's", async () => {
    expect(
      (await t.request("/api/v1/knowledge-bases/docs", { method: "DELETE", key: t.keys.b })).status,
    ).toBe(404);
    const deleted = await t.request("/api/v1/knowledge-bases/docs", { method: "DELETE", key: t.keys.a });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe("");
    expect((await t.request("/api/v1/knowledge-bases/docs", { key: t.keys.a })).status).toBe(404);
  });
});

describe("POST …/documents", () => {
  test("multipart: 202 {id, pending}, Location; file bytes, name, declared type, metadata, externalId", async () => {
    const form = new FormData();
    form.append("file", new File(["# Title\nbody"], "notes.txt", { type: "Text/Markdown; charset=utf-8" }));
    form.append("metadata", JSON.stringify({ team: "support" }));
    form.append("externalId", "ext-1");
    const response = await upload(form);
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as { id: string; status: string };
    expect(accepted.status).toBe("pending");
    expect(response.headers.get("location")).toBe(`/api/v1/knowledge-bases/docs/documents/${accepted.id}`);
    // The upload bucket's state (docs/KNOWLEDGE.md "Rate limits").
    expect(response.headers.get("ratelimit-limit")).toMatch(/^\d+$/);
    const [received] = fake.uploads;
    expect(new TextDecoder().decode(received?.content)).toBe("# Title\nbody");
    expect(received).toMatchObject({
      filename: "notes.txt",
      mediaType: "text/markdown",
      metadata: { team: "support" },
      externalId: "ext-1",
    });
  });

  test("multipart: a generic part type leaves the media type to the extension", async () => {
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array([37, 80, 68, 70])]), "report.pdf");
    expect((await upload(form)).status).toBe(202);
    expect(fake.uploads[0]?.filename).toBe("report.pdf");
    expect(fake.uploads[0]?.mediaType).toBeUndefined();
    expect(fake.uploads[0]?.metadata).toBeUndefined();
  });

  test("JSON: text becomes UTF-8 bytes; the JSON body cap (1 KiB here) does not apply", async () => {
    const text = "é".repeat(1500); // 3000 bytes: over maxBodyBytes, under the upload limit
    const response = await t.request("/api/v1/knowledge-bases/docs/documents", {
      method: "POST",
      key: t.keys.a,
      json: { text, filename: "a.md", metadata: { lang: "fr" } },
    });
    expect(response.status).toBe(202);
    const [received] = fake.uploads;
    expect(received?.content.byteLength).toBe(3000);
    expect(received).toMatchObject({ filename: "a.md", metadata: { lang: "fr" } });
    expect(received?.mediaType).toBeUndefined();
    const bad = await t.request("/api/v1/knowledge-bases/docs/documents", {
      method: "POST",
      key: t.keys.a,
      json: { text: "x" },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain("filename");
  });

  test("413 by Content-Length before the body is read (the body stream errors if pulled)", async () => {
    let pulled = false;
    // highWaterMark 0: nothing is pulled until a reader asks.
    const body = new ReadableStream<Uint8Array>(
      {
        pull() {
          pulled = true;
          throw new Error("the body must not be read");
        },
      },
      { highWaterMark: 0 },
    );
    const request = new Request("http://localhost/api/v1/knowledge-bases/docs/documents", {
      method: "POST",
      headers: {
        authorization: `Bearer ${t.keys.a}`,
        "content-type": "multipart/form-data; boundary=x",
        "content-length": String(50 * 1024 * 1024),
      },
      body,
      duplex: "half",
    } as RequestInit);
    const response = await t.app.fetch(request);
    expect(response.status).toBe(413);
    const error = (await response.json()) as { error: string; code: string };
    expect(error.code).toBe("payload_too_large");
    expect(error.error).toContain("PROMPTRUN_MAX_UPLOAD_BYTES");
    expect(pulled).toBe(false);
    expect(fake.calls).toHaveLength(0);
  });

  test("a chunked body without Content-Length is cut off at the limit (413)", async () => {
    let sent = 0;
    const chunk = new Uint8Array(16 * 1024);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += chunk.byteLength;
        controller.enqueue(chunk); // endless
      },
    });
    const response = await t.app.fetch(
      new Request("http://localhost/api/v1/knowledge-bases/docs/documents", {
        method: "POST",
        headers: { authorization: `Bearer ${t.keys.a}`, "content-type": "application/json" },
        body,
        duplex: "half",
      } as RequestInit),
    );
    expect(response.status).toBe(413);
    expect(sent).toBeGreaterThan(BODY_CAP);
    expect(sent).toBeLessThan(BODY_CAP + 5 * chunk.byteLength);
    expect(fake.calls).toHaveLength(0);
  });

  test("415 for another content type, 400 for malformed multipart and bad fields", async () => {
    const plain = await t.request("/api/v1/knowledge-bases/docs/documents", {
      method: "POST",
      key: t.keys.a,
      headers: { "content-type": "text/plain" },
      body: "hello",
    });
    expect(plain.status).toBe(415);
    expect(await plain.json()).toMatchObject({ code: "unsupported_media_type" });
    const none = await t.request("/api/v1/knowledge-bases/docs/documents", { method: "POST", key: t.keys.a });
    expect(none.status).toBe(415);
    const malformed = await t.request("/api/v1/knowledge-bases/docs/documents", {
      method: "POST",
      key: t.keys.a,
      headers: { "content-type": "multipart/form-data; boundary=abc" },
      body: '--abc\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nno end',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ code: "invalid" });
    const noBoundary = await t.request("/api/v1/knowledge-bases/docs/documents", {
      method: "POST",
      key: t.keys.a,
      headers: { "content-type": "multipart/form-data" },
      body: "x",
    });
    expect(noBoundary.status).toBe(400);
    const cases: [string, (form: FormData) => void][] = [
      ["file", (form) => form.append("metadata", "{}")],
      ["file", (form) => form.append("file", "just text")],
      [
        "metadata",
        (form) => {
          form.append("file", new File(["x"], "a.txt"));
          form.append("metadata", "{not json");
        },
      ],
      [
        "extra",
        (form) => {
          form.append("file", new File(["x"], "a.txt"));
          form.append("extra", "1");
        },
      ],
    ];
    for (const [field, fill] of cases) {
      const form = new FormData();
      fill(form);
      const response = await upload(form);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toContain(field);
    }
    expect(fake.calls).toHaveLength(0);
  });

  test("another tenant's knowledge base is 404; malformed slug 404; 401 without key", async () => {
    const form = new FormData();
    form.append("file", new File(["x"], "a.txt"));
    expect((await upload(form, t.keys.b)).status).toBe(404);
    expect((await upload(form, t.keys.a, "Bad%20Slug")).status).toBe(404);
    expect(
      (await t.request("/api/v1/knowledge-bases/docs/documents", { method: "POST", body: form })).status,
    ).toBe(401);
  });
});

describe("documents and search", () => {
  async function addText(text: string): Promise<string> {
    const response = await t.request("/api/v1/knowledge-bases/docs/documents", {
      method: "POST",
      key: t.keys.a,
      json: { text, filename: "a.txt" },
    });
    return ((await response.json()) as { id: string }).id;
  }

  test("list with status filter, get, delete; bad ids and other tenants are 404", async () => {
    const first = await addText("one");
    await addText("two");
    fake.setStatus(first, "ready");
    const ready = await t.request("/api/v1/knowledge-bases/docs/documents?status=ready", { key: t.keys.a });
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { items: { id: string }[] }).items.map((doc) => doc.id)).toEqual([first]);
    expect(fake.calls.at(-1)).toMatchObject({
      method: "listDocuments",
      args: ["docs", { status: "ready", limit: 50 }],
    });
    expect(
      (await t.request("/api/v1/knowledge-bases/docs/documents?status=done", { key: t.keys.a })).status,
    ).toBe(400);
    const got = await t.request(`/api/v1/knowledge-bases/docs/documents/${first}`, { key: t.keys.a });
    expect(await got.json()).toMatchObject({ id: first, status: "ready", filename: "a.txt" });
    expect(
      (await t.request(`/api/v1/knowledge-bases/docs/documents/${first}`, { key: t.keys.b })).status,
    ).toBe(404);
    expect(
      (await t.request("/api/v1/knowledge-bases/docs/documents/not-a-uuid", { key: t.keys.a })).status,
    ).toBe(404);
    const deleted = await t.request(`/api/v1/knowledge-bases/docs/documents/${first}`, {
      method: "DELETE",
      key: t.keys.a,
    });
    expect(deleted.status).toBe(204);
    expect(
      (await t.request(`/api/v1/knowledge-bases/docs/documents/${first}`, { key: t.keys.a })).status,
    ).toBe(404);
  });

  test("search → 200 {items}; topK over 50 → 400; not JSON → 415; other tenant 404", async () => {
    await addText("refunds take five days");
    const response = await t.request("/api/v1/knowledge-bases/docs/search", {
      method: "POST",
      key: t.keys.a,
      json: { query: "refund", topK: 3, mode: "keyword" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("ratelimit-remaining")).toMatch(/^\d+$/);
    const result = (await response.json()) as { items: { filename: string }[] };
    expect(result.items[0]?.filename).toBe("a.txt");
    expect(fake.calls.at(-1)).toMatchObject({
      method: "search",
      args: ["docs", { query: "refund", topK: 3 }],
    });
    const tooMany = await t.request("/api/v1/knowledge-bases/docs/search", {
      method: "POST",
      key: t.keys.a,
      json: { query: "refund", topK: 10_000 },
    });
    expect(tooMany.status).toBe(400);
    const text = await t.request("/api/v1/knowledge-bases/docs/search", {
      method: "POST",
      key: t.keys.a,
      headers: { "content-type": "text/plain" },
      body: "refund",
    });
    expect(text.status).toBe(415);
    const other = await t.request("/api/v1/knowledge-bases/docs/search", {
      method: "POST",
      key: t.keys.b,
      json: { query: "refund" },
    });
    expect(other.status).toBe(404);
  });

  test("unsupported methods are 405 with Allow", async () => {
    const response = await t.request("/api/v1/knowledge-bases/docs/search", { method: "GET", key: t.keys.a });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
  });
});
