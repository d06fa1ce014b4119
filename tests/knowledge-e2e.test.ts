/**
 * Knowledge bases end to end through the real server (SQLite, or Postgres + Redis with
 * PROMPTRUN_E2E_DATABASE=postgres), docs/KNOWLEDGE.md: documents uploaded over REST (multipart
 * PDF and DOCX, JSON text) are ingested in the background with dev:hash; keyword, vector and
 * hybrid search each find the expected chunk first; a prompt with `retrieval:` run through the
 * typed client answers with citations to the right document, and its thread stream shows
 * `run.retrieval` before the first token; `document.ready` reaches a real receiver, signed;
 * replacing by externalId and deleting leave no chunk (nor any copy of the text) behind.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPromptrunClient } from "@promptrun/client";
import type { KnowledgeDocument, SearchHit } from "@promptrun/contract";
import { pushPrompts } from "./hardening/support.ts";
import {
  addFileDocument,
  addTextDocument,
  createKnowledgeBase,
  getKnowledgeBase,
  kbPath,
  listDocuments,
  readFixture,
  search,
  searchRaw,
  waitUntilReady,
} from "./support/knowledge.ts";
import { api, startServer, type TestServer } from "./support/server.ts";
import { SseConnection } from "./support/sse.ts";
import { tablesContaining } from "./support/tables.ts";
import { addWebhook, startWebhookReceiver } from "./support/webhook-receiver.ts";

const DIALECT = process.env.PROMPTRUN_E2E_DATABASE ?? "sqlite";
const KB = "handbook";
const MODES = ["keyword", "vector", "hybrid"] as const;

/** The fixtures (tests/fixtures/knowledge, made by scripts with these phrases on them). */
const PDF = readFixture("handbook.pdf");
const DOCX = readFixture("policies.docx");
const PDF_PHRASE = "The vacation policy grants 27 days";
const DOCX_PHRASE = "Expense reports are due on the 5th business day";

/** Paragraphs long enough (> 64 tokens) that each becomes its own chunk with maxTokens 64. */
const paragraph = (sentence: string, filler: string) => `${sentence} ${`${filler} `.repeat(12).trim()}`;
const OFFICE_TEXT = [
  "# Office notes",
  paragraph(
    "The office cat is named Zephyrine and she sleeps in the mailroom.",
    "Lunch is served in the canteen on the ground floor.",
  ),
  paragraph(
    "The rooftop garden grows saffron crocuses every autumn.",
    "Meeting rooms are booked through the front desk.",
  ),
  paragraph(
    "Bicycles are parked in the basement beside the boiler.",
    "Visitors sign in at reception and wear a badge.",
  ),
].join("\n\n");

const receiver = startWebhookReceiver();
let server: TestServer;
const ids: { office?: string; pdf?: string; docx?: string } = {};

beforeAll(async () => {
  server = await startServer({ env: { PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: "0.2,0.2,0.2" } });
  await addWebhook(server, server.tenantId, receiver, ["document.ready", "document.failed"]);
});
afterAll(async () => {
  receiver.stop();
  await server?.dispose();
});

const flat = (text: string) => text.replace(/\s+/g, " ").toLowerCase();

/** Each mode's first hit is a chunk of `documentId` containing `phrase`. */
async function expectFirstHit(slug: string, query: string, documentId: string, phrase: string) {
  for (const mode of MODES) {
    const hits: SearchHit[] = await search(server, slug, { query, mode, topK: 5 });
    expect(hits.length, `${mode} search for "${query}" found nothing`).toBeGreaterThan(0);
    expect({ mode, documentId: hits[0]!.documentId }).toEqual({ mode, documentId });
    expect(flat(hits[0]!.text)).toContain(flat(phrase));
    // Best first, each mode by its own score.
    const scores = hits.map((hit) => hit.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  }
}

const readyEventsOf = (documentId: string) =>
  receiver.received.filter(
    (delivery) => delivery.payload.type === "document.ready" && delivery.payload.data.id === documentId,
  );

async function waitForReadyEvent(documentId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (readyEventsOf(documentId).length === 0) {
    if (Date.now() > deadline) throw new Error(`no document.ready webhook for ${documentId}`);
    await Bun.sleep(25);
  }
  return readyEventsOf(documentId)[0]!;
}

function expectReadyEvent(
  delivery: Awaited<ReturnType<typeof waitForReadyEvent>>,
  document: KnowledgeDocument,
) {
  expect(delivery.verified).toBe(true);
  expect(delivery.payload).toMatchObject({
    type: "document.ready",
    timestamp: expect.any(String),
    data: {
      id: document.id,
      knowledgeBase: KB,
      filename: document.filename,
      status: "ready",
      chunkCount: document.chunkCount,
    },
  });
}

describe(`knowledge bases end to end (${DIALECT})`, () => {
  test("a JSON text document is ingested; keyword, vector and hybrid search find its chunk first; document.ready is signed", async () => {
    const created = await createKnowledgeBase(server, {
      slug: KB,
      description: "The staff handbook",
      embeddingModel: "dev:hash",
      chunking: { maxTokens: 64, overlap: 8 },
    });
    expect(created).toMatchObject({
      slug: KB,
      embeddingModel: "dev:hash",
      chunking: { maxTokens: 64, overlap: 8 },
      documentCount: 0,
      chunkCount: 0,
    });
    ids.office = await addTextDocument(server, KB, {
      text: OFFICE_TEXT,
      filename: "office.md",
      mediaType: "text/markdown",
      metadata: { team: "facilities" },
    });
    const office = await waitUntilReady(server, KB, ids.office);
    expect(office).toMatchObject({
      filename: "office.md",
      mediaType: "text/markdown",
      metadata: { team: "facilities" },
      error: null,
      readyAt: expect.any(String),
    });
    // Three long paragraphs at 64 tokens a chunk: several chunks, every token counted, dev:hash free.
    expect(office.chunkCount).toBeGreaterThanOrEqual(3);
    expect(office.tokens).toBeGreaterThan(0);
    expect(office.cost?.total ?? 0).toBe(0);

    await expectFirstHit(KB, "office cat Zephyrine mailroom", ids.office, "named Zephyrine");
    await expectFirstHit(KB, "rooftop garden saffron crocuses", ids.office, "saffron crocuses");
    // The metadata filter narrows: another team's filter finds nothing.
    expect(
      await search(server, KB, { query: "Zephyrine", mode: "keyword", filter: { team: "sales" } }),
    ).toEqual([]);
    const filtered = await search(server, KB, {
      query: "Zephyrine",
      mode: "keyword",
      filter: { team: "facilities" },
    });
    expect(filtered[0]?.documentId).toBe(ids.office);
    expect(filtered[0]?.metadata).toEqual({ team: "facilities" });

    expectReadyEvent(await waitForReadyEvent(ids.office), office);
  });

  test.skipIf(!PDF || !DOCX)(
    `the PDF and DOCX fixtures are ingested and found by every mode${!PDF || !DOCX ? " (SKIPPED: tests/fixtures/knowledge/handbook.pdf or policies.docx missing)" : ""}`,
    async () => {
      ids.pdf = await addFileDocument(server, KB, {
        filename: "handbook.pdf",
        content: PDF!,
        type: "application/pdf",
        metadata: { kind: "handbook" },
      });
      ids.docx = await addFileDocument(server, KB, {
        filename: "policies.docx",
        content: DOCX!,
        type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      });
      const pdf = await waitUntilReady(server, KB, ids.pdf);
      const docx = await waitUntilReady(server, KB, ids.docx);
      expect(pdf).toMatchObject({
        mediaType: "application/pdf",
        metadata: { kind: "handbook" },
        bytes: PDF!.length,
      });
      expect(docx.mediaType).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document");
      expect(pdf.chunkCount).toBeGreaterThan(0);
      expect(docx.chunkCount).toBeGreaterThan(0);

      await expectFirstHit(KB, "vacation policy grants 27 days", ids.pdf, PDF_PHRASE);
      await expectFirstHit(KB, "expense reports due 5th business day", ids.docx, DOCX_PHRASE);

      expectReadyEvent(await waitForReadyEvent(ids.pdf), pdf);
      expectReadyEvent(await waitForReadyEvent(ids.docx), docx);
      const kb = await getKnowledgeBase(server, KB);
      const documents = await listDocuments(server, KB);
      expect(kb.documentCount).toBe(documents.length);
      expect(kb.chunkCount).toBe(documents.reduce((sum, document) => sum + document.chunkCount, 0));
    },
  );

  test("a prompt with retrieval: answers through the client with citations to the right document; run.retrieval precedes the first token", async () => {
    if (!ids.office) throw new Error("needs the first test's document");
    await pushPrompts(server, server.tenantId, [
      {
        slug: "ask-handbook",
        model: "dev:echo",
        params: { delayMs: 5 },
        inputs: { question: { type: "string" } },
        retrieval: { knowledgeBase: KB, query: "{{question}}", topK: 3 },
        messages: [
          { role: "system", content: "Answer only from the sources and cite them as [n]." },
          { role: "user", content: "Sources:\n{{retrieval}}\n\nQuestion: {{question}}" },
        ],
      },
    ]);
    const client = createPromptrunClient({ baseUrl: server.url, apiKey: server.apiKey });
    const thread = crypto.randomUUID();
    const minted = await client.threads.createStreamToken(thread);
    const stream = await SseConnection.open(minted.url, { token: minted.token });
    try {
      await stream.waitFor((event) => event.event === "ready");
      const question = "What is the office cat Zephyrine called, and where does she sleep?";
      const { id } = await client.runs.create("ask-handbook", "latest", { inputs: { question }, thread });
      const run = await client.runs.wait(id, { intervalMs: 50, timeoutMs: 60_000 });
      expect(run.status).toBe("completed");

      // The search the run made: the cat's chunk first.
      expect(run.retrieval).toHaveLength(1);
      const retrieval = run.retrieval[0]!;
      expect(retrieval.knowledgeBase).toBe(KB);
      expect(retrieval.query).toBe(question);
      expect(retrieval.chunks.map((chunk) => chunk.n)).toEqual(retrieval.chunks.map((_, index) => index + 1));
      const first = retrieval.chunks[0]!;
      expect(first).toMatchObject({ n: 1, documentId: ids.office, filename: "office.md" });

      // dev:echo echoes the user message, so every [n] of {{retrieval}} is in the output: one
      // citation per retrieved chunk, [1] naming the cat's document and quoting its chunk.
      expect(run.output).toContain("[1] office.md: ");
      const citations = run.citations;
      expect(citations.map((citation) => citation.n)).toEqual(retrieval.chunks.map((chunk) => chunk.n));
      const [hit] = await search(server, KB, { query: question, topK: 1 });
      expect(citations[0]).toEqual({
        n: 1,
        chunkId: first.chunkId,
        documentId: ids.office,
        filename: "office.md",
        quote: hit!.chunkId === first.chunkId ? hit!.text.slice(0, 200) : expect.any(String),
      });
      expect(flat(citations[0]!.quote)).toContain("zephyrine");
      for (const citation of citations) {
        const chunk = retrieval.chunks.find((candidate) => candidate.n === citation.n)!;
        expect(citation.chunkId).toBe(chunk.chunkId);
        expect(citation.documentId).toBe(chunk.documentId);
        expect(citation.quote.length).toBeLessThanOrEqual(200);
      }

      // The stream: run.retrieval (same chunks) before the run's first run.token.
      await stream.waitFor((event) => event.event === "run.completed" && event.data.runId === id, 30_000);
      const ofRun = stream.events.filter((event) => event.data.runId === id).map((event) => event.event);
      const retrievalAt = ofRun.indexOf("run.retrieval");
      const firstTokenAt = ofRun.indexOf("run.token");
      expect(retrievalAt).toBeGreaterThanOrEqual(0);
      expect(firstTokenAt).toBeGreaterThan(retrievalAt);
      const event = stream.events.find((candidate) => candidate.event === "run.retrieval")!;
      expect(event.data).toEqual({ runId: id, knowledgeBase: KB, query: question, chunks: retrieval.chunks });
    } finally {
      stream.close();
    }
  });

  test("the demo: acme-docs is seeded from knowledge/demo and ask-docs answers keylessly with citations", async () => {
    const demo = await listDocuments(server, "acme-docs");
    expect(demo.map((document) => document.filename).sort()).toEqual([
      "returns.md",
      "safety.md",
      "shipping.md",
      "warranty.md",
    ]);
    for (const document of demo) await waitUntilReady(server, "acme-docs", document.id);
    expect(await getKnowledgeBase(server, "acme-docs")).toMatchObject({
      embeddingModel: "dev:hash",
      documentCount: 4,
    });

    const client = createPromptrunClient({ baseUrl: server.url, apiKey: server.apiKey });
    const { id } = await client.runs.create("ask-docs", "production", {
      inputs: { question: "How many months does the warranty of the Rocket Skates last?" },
    });
    const run = await client.runs.wait(id, { intervalMs: 50, timeoutMs: 60_000 });
    expect(run.status).toBe("completed");
    expect(run.retrieval[0]?.knowledgeBase).toBe("acme-docs");
    expect(run.retrieval[0]?.chunks).toHaveLength(3);
    expect(run.retrieval[0]?.chunks[0]?.filename).toBe("warranty.md");
    expect(run.output).toContain("[1] warranty.md: ");
    expect(run.output).toContain("36-month limited warranty");
    const warranty = demo.find((document) => document.filename === "warranty.md")!;
    expect(run.citations[0]).toMatchObject({ n: 1, documentId: warranty.id, filename: "warranty.md" });
  });

  test("the CLI: kb create, kb add (files), kb search, kb rm against the same database", async () => {
    const directory = mkdtempSync(join(tmpdir(), "promptrun-kb-cli-"));
    try {
      const file = join(directory, "lighthouse.md");
      writeFileSync(
        file,
        paragraph("The lighthouse keeper polishes the brass lens.", "Ships pass at night."),
      );
      const tenant = ["--tenant", server.tenantId];
      const created = await server.cli<{ slug: string }>(
        "kb",
        "create",
        "cli-kb",
        ...tenant,
        "--max-tokens",
        "64",
      );
      expect({ code: created.code, slug: created.json.slug }).toEqual({ code: 0, slug: "cli-kb" });
      const added = await server.cli<Array<{ filename: string; id: string; status: string }>>(
        "kb",
        "add",
        "cli-kb",
        file,
        ...tenant,
      );
      expect(added.code).toBe(0);
      expect(added.json).toEqual([{ filename: "lighthouse.md", id: expect.any(String), status: "pending" }]);
      // The server's worker ingests what the CLI queued in the shared database.
      await waitUntilReady(server, "cli-kb", added.json[0]!.id);
      const found = await server.cli<{ items: SearchHit[] }>(
        "kb",
        "search",
        "cli-kb",
        "brass lens",
        ...tenant,
        "--mode",
        "keyword",
      );
      expect(found.json.items[0]?.documentId).toBe(added.json[0]!.id);
      expect((await server.cli("kb", "rm", "cli-kb", ...tenant)).code).toBe(0);
      expect((await api(server, kbPath("cli-kb"))).status).toBe(404);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  test("replacing a document by externalId leaves no stale chunk and the same document count", async () => {
    const oldId = await addTextDocument(server, KB, {
      text: paragraph("The parking garage password is marmalade.", "Cars leave by the north ramp."),
      filename: "parking.md",
      externalId: "parking-faq",
    });
    await waitUntilReady(server, KB, oldId);
    expect((await search(server, KB, { query: "marmalade", mode: "keyword" }))[0]?.documentId).toBe(oldId);
    const before = await getKnowledgeBase(server, KB);

    const newId = await addTextDocument(server, KB, {
      text: paragraph("The parking garage password is tangerine.", "Cars leave by the north ramp."),
      filename: "parking.md",
      externalId: "parking-faq",
    });
    expect(newId).not.toBe(oldId);
    const replacement = await waitUntilReady(server, KB, newId);
    expect(replacement.externalId).toBe("parking-faq");

    // The old document is gone with every chunk: keyword finds nothing, vector never names it.
    expect((await api(server, kbPath(KB, `/documents/${oldId}`))).status).toBe(404);
    expect(await search(server, KB, { query: "marmalade", mode: "keyword" })).toEqual([]);
    for (const mode of ["vector", "hybrid"] as const) {
      const hits = await search(server, KB, { query: "parking garage password marmalade", mode, topK: 50 });
      expect(hits.some((hit) => hit.documentId === oldId)).toBe(false);
      expect(hits[0]?.documentId).toBe(newId);
    }
    expect((await search(server, KB, { query: "tangerine", mode: "keyword" }))[0]?.documentId).toBe(newId);

    const after = await getKnowledgeBase(server, KB);
    expect(after.documentCount).toBe(before.documentCount);
    const documents = await listDocuments(server, KB);
    expect(documents.filter((document) => document.externalId === "parking-faq").map((d) => d.id)).toEqual([
      newId,
    ]);
    expect(after.chunkCount).toBe(documents.reduce((sum, document) => sum + document.chunkCount, 0));
    // No copy of the old text anywhere in the database (chunks, keyword index, upload bytes).
    expect(await tablesContaining(server, "marmalade")).toEqual([]);
  });

  test("deleting a document, then the knowledge base, removes their chunks; a new one with the slug is empty", async () => {
    const slug = "scratch";
    await createKnowledgeBase(server, { slug, embeddingModel: "dev:hash", chunking: { maxTokens: 64 } });
    const albatross = await addTextDocument(server, slug, {
      text: paragraph("An albatross glides over the southern ocean.", "Seabirds rest on the waves."),
      filename: "birds.txt",
    });
    const bergamot = await addTextDocument(server, slug, {
      text: paragraph("Bergamot oil flavours the earl grey tea.", "Citrus trees grow in Calabria."),
      filename: "tea.txt",
    });
    await waitUntilReady(server, slug, albatross);
    const tea = await waitUntilReady(server, slug, bergamot);

    expect((await api(server, kbPath(slug, `/documents/${albatross}`), { method: "DELETE" })).status).toBe(
      204,
    );
    expect((await api(server, kbPath(slug, `/documents/${albatross}`))).status).toBe(404);
    expect((await api(server, kbPath(slug, `/documents/${albatross}`), { method: "DELETE" })).status).toBe(
      404,
    );
    expect(await search(server, slug, { query: "albatross", mode: "keyword" })).toEqual([]);
    const vectorHits = await search(server, slug, {
      query: "albatross southern ocean",
      mode: "vector",
      topK: 50,
    });
    expect(vectorHits.every((hit) => hit.documentId === bergamot)).toBe(true);
    expect(await getKnowledgeBase(server, slug)).toMatchObject({
      documentCount: 1,
      chunkCount: tea.chunkCount,
    });
    expect(await tablesContaining(server, "albatross")).toEqual([]);

    expect((await api(server, kbPath(slug), { method: "DELETE" })).status).toBe(204);
    expect((await api(server, kbPath(slug))).status).toBe(404);
    expect((await searchRaw(server, slug, { query: "bergamot" })).status).toBe(404);
    expect((await api(server, kbPath(slug, `/documents/${bergamot}`))).status).toBe(404);
    expect(await tablesContaining(server, "Bergamot oil")).toEqual([]);

    await createKnowledgeBase(server, { slug, embeddingModel: "dev:hash" });
    expect(await getKnowledgeBase(server, slug)).toMatchObject({ documentCount: 0, chunkCount: 0, bytes: 0 });
    for (const mode of MODES)
      expect(await search(server, slug, { query: "bergamot earl grey", mode })).toEqual([]);
    expect(await listDocuments(server, slug)).toEqual([]);
  });
});
