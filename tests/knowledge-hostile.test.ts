/**
 * Hostile input to knowledge bases, through the real server (SQLite, or Postgres + Redis with
 * PROMPTRUN_E2E_DATABASE=postgres), docs/KNOWLEDGE.md: a 50 MB upload is refused by its declared
 * length before the body is read (and a chunked one is cut off at the limit); files whose name
 * lies, zip bombs, broken and scanned PDFs; search limits and prototype keys; malformed
 * multipart; and another tenant's knowledge base, which is not found on every route.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTenant, rawConnect, residentKb, type Tenant, waitUntil } from "./hardening/support.ts";
import {
  addTextDocument,
  createKnowledgeBase,
  getKnowledgeBase,
  kbPath,
  readFixture,
  search,
  searchRaw,
  uploadFile,
  waitForDocument,
  waitUntilReady,
} from "./support/knowledge.ts";
import { api, startServer, type TestServer } from "./support/server.ts";

const DIALECT = process.env.PROMPTRUN_E2E_DATABASE ?? "sqlite";
const MIB = 1_048_576;
const KB = "handbook";
const DOCUMENTS = kbPath(KB, "/documents");
const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

const BOMB = readFixture("bomb.docx");
const BROKEN_PDF = readFixture("broken.pdf");
const SCANNED_PDF = readFixture("scanned.pdf");
const missing = (name: string, bytes: Uint8Array | null) =>
  bytes ? "" : ` (SKIPPED: tests/fixtures/knowledge/${name} missing)`;

let server: TestServer;
let documentId: string;
beforeAll(async () => {
  server = await startServer();
  await createKnowledgeBase(server, { slug: KB, embeddingModel: "dev:hash", chunking: { maxTokens: 64 } });
  documentId = await addTextDocument(server, KB, {
    text: "The lighthouse keeper winds the clock every evening at dusk.",
    filename: "lighthouse.txt",
  });
  await waitUntilReady(server, KB, documentId);
});
afterAll(async () => {
  await server?.dispose();
});

const errorOf = async (response: Response) => (await response.json()) as { error: string; code: string };

async function expectRefused(response: Response, status: number, code: string) {
  const body = await response.text();
  expect({ status: response.status, body }).toMatchObject({
    status,
    body: expect.stringContaining(`"${code}"`),
  });
  return JSON.parse(body) as { error: string; code: string };
}

/** Uploads a fixture, expects 202, and waits until it ends: it must end failed. */
async function ingestFailing(filename: string, content: Uint8Array, type?: string) {
  const response = await uploadFile(server, KB, { filename, content, ...(type ? { type } : {}) });
  expect(response.status, await response.clone().text()).toBe(202);
  const { id } = (await response.json()) as { id: string };
  const document = await waitForDocument(server, KB, id, 60_000);
  expect(document.status).toBe("failed");
  expect(document.chunkCount).toBe(0);
  return document;
}

describe(`upload limits (${DIALECT})`, () => {
  test("a 50 MB Content-Length is answered 413 after a few bytes, without reading the body", async () => {
    const before = residentKb(server.process.pid);
    const started = Date.now();
    const socket = await rawConnect(server);
    socket.write(
      `POST ${DOCUMENTS} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.apiKey}\r\n` +
        `Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: ${50 * 1000 * 1000}\r\n\r\n` +
        `--xyz\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\n`,
    );
    // Nothing more is sent: the answer can only come from the declared length.
    await waitUntil(() => /\r\n\r\n\{.*\}/s.test(socket.received()), "the 413 answer", 10_000);
    socket.end();
    expect(socket.received()).toStartWith("HTTP/1.1 413");
    expect(socket.received()).toContain('"payload_too_large"');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(residentKb(server.process.pid) - before).toBeLessThan(16 * 1024);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  test("the same for a JSON document whose declared length is over the limit", async () => {
    const socket = await rawConnect(server);
    socket.write(
      `POST ${DOCUMENTS} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.apiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${50 * 1000 * 1000}\r\n\r\n{"filename":"big.txt","text":"`,
    );
    await waitUntil(() => /\r\n\r\n\{.*\}/s.test(socket.received()), "the 413 answer", 10_000);
    socket.end();
    expect(socket.received()).toStartWith("HTTP/1.1 413");
  });

  test("a chunked upload without Content-Length is cut off at the limit (413), not buffered", async () => {
    const before = residentKb(server.process.pid);
    let sent = 0;
    const head = new TextEncoder().encode(
      `--xyz\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`,
    );
    const chunk = new Uint8Array(256 * 1024).fill(0x61);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 60 * MIB) {
          controller.close();
          return;
        }
        const next = sent === 0 ? head : chunk;
        sent += next.byteLength;
        controller.enqueue(next);
      },
    });
    const response = await fetch(`${server.url}${DOCUMENTS}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${server.apiKey}`,
        "content-type": "multipart/form-data; boundary=xyz",
      },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect((await errorOf(response)).code).toBe("payload_too_large");
    // Read up to the limit (20 MiB by default), never the 60 MiB offered, nor held in memory.
    expect(sent).toBeLessThan(52 * MIB);
    expect(residentKb(server.process.pid) - before).toBeLessThan(96 * 1024);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect((await getKnowledgeBase(server, KB)).documentCount).toBe(1);
  });
});

describe(`hostile files (${DIALECT})`, () => {
  test("a file whose extension lies about its type (lying.pdf) is refused with 415", async () => {
    const text =
      readFixture("lying.pdf") ?? new TextEncoder().encode("This is plain text pretending to be a PDF.\n");
    const byName = await expectRefused(
      await uploadFile(server, KB, { filename: "lying.pdf", content: text }),
      415,
      "unsupported_media_type",
    );
    expect(byName.error).toContain("not a PDF");
    await expectRefused(
      await uploadFile(server, KB, { filename: "lying.pdf", content: text, type: "application/pdf" }),
      415,
      "unsupported_media_type",
    );
    // A PDF declared as a Word document is refused as well.
    const pdfHead = new TextEncoder().encode("%PDF-1.7\n1 0 obj\n<<>>\nendobj\n");
    await expectRefused(
      await uploadFile(server, KB, { filename: "report.docx", content: pdfHead, type: DOCX_TYPE }),
      415,
      "unsupported_media_type",
    );
    expect((await getKnowledgeBase(server, KB)).documentCount).toBe(1);
  });

  test("a name without a known extension: JSON text is text/plain, a multipart file is 415", async () => {
    const id = await addTextDocument(server, KB, {
      text: "The tide table hangs by the door.",
      filename: "TIDES",
    });
    const document = await waitForDocument(server, KB, id, 30_000);
    expect({ status: document.status, mediaType: document.mediaType }).toEqual({
      status: "ready",
      mediaType: "text/plain",
    });
    await expectRefused(
      await uploadFile(server, KB, {
        filename: "TIDES",
        content: new TextEncoder().encode("The tide table."),
      }),
      415,
      "unsupported_media_type",
    );
  });

  test("an unsupported type (.exe) is refused with 415 naming the accepted types", async () => {
    const exe = new Uint8Array([0x4d, 0x5a, 0x90, 0x00, 0x03, 0x00, 0x00, 0x00]);
    const refused = await expectRefused(
      await uploadFile(server, KB, { filename: "setup.exe", content: exe }),
      415,
      "unsupported_media_type",
    );
    expect(refused.error).toContain("application/pdf");
    await expectRefused(
      await uploadFile(server, KB, { filename: "setup.exe", content: exe, type: "application/x-msdownload" }),
      415,
      "unsupported_media_type",
    );
    const json = await api(server, DOCUMENTS, {
      method: "POST",
      json: { text: "hello", filename: "x.txt", mediaType: "application/x-msdownload" },
    });
    await expectRefused(json, 415, "unsupported_media_type");
  });

  test.skipIf(!BOMB)(
    `a zip bomb disguised as DOCX is accepted, then fails with a clear error; memory stays bounded${missing("bomb.docx", BOMB)}`,
    async () => {
      const before = residentKb(server.process.pid);
      const document = await ingestFailing("bomb.docx", BOMB!, DOCX_TYPE);
      expect(document.error).toMatch(/zip bomb|expands to more than/i);
      // 1 GiB inside: had it been inflated in memory, the server would have grown by that.
      expect(residentKb(server.process.pid) - before).toBeLessThan(256 * 1024);
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
      expect((await search(server, KB, { query: "lighthouse keeper" }))[0]?.documentId).toBe(documentId);
    },
  );

  test.skipIf(!BROKEN_PDF)(
    `a PDF that does not parse fails with "could not read the PDF"${missing("broken.pdf", BROKEN_PDF)}`,
    async () => {
      const document = await ingestFailing("broken.pdf", BROKEN_PDF!);
      expect(document.error).toContain("could not read the PDF");
    },
  );

  test.skipIf(!SCANNED_PDF)(
    `a scanned PDF (an image, no text) fails with "no text layer"${missing("scanned.pdf", SCANNED_PDF)}`,
    async () => {
      const document = await ingestFailing("scanned.pdf", SCANNED_PDF!, "application/pdf");
      expect(document.error).toContain("no text layer");
    },
  );

  test("malformed multipart is a 400, and so is a form without its file", async () => {
    const before = (await getKnowledgeBase(server, KB)).documentCount;
    const garbled = await api(server, DOCUMENTS, {
      method: "POST",
      headers: { "content-type": "multipart/form-data; boundary=xyz" },
      body: "this is not multipart at all\r\n--abc\r\nnothing",
    });
    await expectRefused(garbled, 400, "invalid");
    const noBoundary = await api(server, DOCUMENTS, {
      method: "POST",
      headers: { "content-type": "multipart/form-data" },
      body: "--xyz\r\n\r\n",
    });
    await expectRefused(noBoundary, 400, "invalid");
    const form = new FormData();
    form.set("externalId", "no-file");
    const withoutFile = await api(server, DOCUMENTS, { method: "POST", body: form });
    expect((await expectRefused(withoutFile, 400, "invalid")).error).toContain("file");
    const badMetadata = new FormData();
    badMetadata.set("file", new File(["hello"], "hello.txt", { type: "text/plain" }));
    badMetadata.set("metadata", "{not json");
    expect(
      (
        await expectRefused(
          await api(server, DOCUMENTS, { method: "POST", body: badMetadata }),
          400,
          "invalid",
        )
      ).error,
    ).toContain("metadata");
    expect((await getKnowledgeBase(server, KB)).documentCount).toBe(before);
  });
});

describe(`search limits (${DIALECT})`, () => {
  test("topK 10000 (and 0) is a 400 naming topK", async () => {
    const huge = await expectRefused(
      await searchRaw(server, KB, { query: "lighthouse", topK: 10_000 }),
      400,
      "invalid",
    );
    expect(huge.error).toContain("topK");
    await expectRefused(await searchRaw(server, KB, { query: "lighthouse", topK: 0 }), 400, "invalid");
    expect(await search(server, KB, { query: "lighthouse", topK: 50 })).not.toEqual([]);
  });

  test("a filter with __proto__ is a 400; constructor is an ordinary key that matches nothing", async () => {
    const filtered = (filter: string) =>
      api(server, kbPath(KB, "/search"), {
        method: "POST",
        headers: { "content-type": "application/json" },
        // Written by hand: JSON.stringify of an object literal would drop a __proto__ key.
        body: `{"query":"lighthouse","mode":"keyword","filter":${filter}}`,
      });
    await expectRefused(await filtered(`{"__proto__":"x"}`), 400, "invalid");
    const ordinary = await filtered(`{"constructor":"x"}`);
    expect(ordinary.status).toBe(200);
    expect(((await ordinary.json()) as { items: unknown[] }).items).toEqual([]);
    const nested = await api(server, kbPath(KB, "/search"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"query":"lighthouse","filter":{"team":{"in":["a"],"__proto__":{"polluted":true}}}}`,
    });
    await expectRefused(nested, 400, "invalid");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test("a huge query (over 4096 bytes) is a 400; an empty one too", async () => {
    const huge = await expectRefused(
      await searchRaw(server, KB, { query: "lighthouse ".repeat(1_000) }),
      400,
      "invalid",
    );
    expect(huge.error).toContain("query");
    await expectRefused(await searchRaw(server, KB, { query: "é".repeat(2_100) }), 400, "invalid");
    await expectRefused(await searchRaw(server, KB, { query: "" }), 400, "invalid");
    // Full-text syntax in the query is text, never a syntax error.
    for (const query of ['"unbalanced', "NEAR(a b", "a AND OR NOT", "*", "lighthouse:* & !|"]) {
      const response = await searchRaw(server, KB, { query, mode: "keyword" });
      expect({ query, status: response.status }).toEqual({ query, status: 200 });
    }
  });
});

describe(`another tenant's knowledge base (${DIALECT})`, () => {
  let other: Tenant;
  beforeAll(async () => {
    other = await createTenant(server, "intruder");
  });
  const asOther = (path: string, init: RequestInit & { json?: unknown } = {}) =>
    api({ url: server.url, apiKey: other.apiKey }, path, init);

  test("is not found on every route, and stays untouched", async () => {
    const before = await getKnowledgeBase(server, KB);
    const form = new FormData();
    form.set("file", new File(["stolen"], "x.txt", { type: "text/plain" }));
    const attempts: Array<[string, Promise<Response>]> = [
      ["GET kb", asOther(kbPath(KB))],
      ["GET documents", asOther(kbPath(KB, "/documents"))],
      ["GET document", asOther(kbPath(KB, `/documents/${documentId}`))],
      ["POST document JSON", asOther(DOCUMENTS, { method: "POST", json: { text: "x", filename: "x.txt" } })],
      ["POST document multipart", asOther(DOCUMENTS, { method: "POST", body: form })],
      ["POST search", asOther(kbPath(KB, "/search"), { method: "POST", json: { query: "lighthouse" } })],
      ["DELETE document", asOther(kbPath(KB, `/documents/${documentId}`), { method: "DELETE" })],
      ["DELETE kb", asOther(kbPath(KB), { method: "DELETE" })],
    ];
    for (const [what, pending] of attempts) {
      const response = await pending;
      expect({ what, status: response.status }).toEqual({ what, status: 404 });
      expect((await errorOf(response)).code).toBe("not_found");
    }
    const listed = (await (await asOther("/api/v1/knowledge-bases")).json()) as {
      items: Array<{ slug: string }>;
    };
    expect(listed.items.map((kb) => kb.slug)).not.toContain(KB);

    // The owner's knowledge base is intact.
    expect(await getKnowledgeBase(server, KB)).toEqual(before);
    expect((await search(server, KB, { query: "lighthouse keeper" }))[0]?.documentId).toBe(documentId);

    // The other tenant has its own namespace: the same slug is a different, empty knowledge base.
    const own = await asOther("/api/v1/knowledge-bases", { method: "POST", json: { slug: KB } });
    expect(own.status).toBe(201);
    const mine = (await own.json()) as { id: string; documentCount: number };
    expect(mine.documentCount).toBe(0);
    expect(mine.id).not.toBe((await getKnowledgeBase(server, KB)).id);
    const ownSearch = await asOther(kbPath(KB, "/search"), { method: "POST", json: { query: "lighthouse" } });
    expect(((await ownSearch.json()) as { items: unknown[] }).items).toEqual([]);
    // Its documents are its own: the owner's document id is still not found through it.
    expect((await asOther(kbPath(KB, `/documents/${documentId}`))).status).toBe(404);
  });
});
