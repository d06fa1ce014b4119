/**
 * Kill the server (SIGKILL) while it ingests 50 documents — some ready, the others pending or
 * mid-ingestion — then restart it on the same database (SQLite file, or Postgres where the new
 * instance takes the dead one's leases over), docs/KNOWLEDGE.md "Ingestion": every document ends
 * ready, none is lost, none has a duplicate chunk (each chunk count equals a clean ingestion of
 * the same text; a search for a document's own word finds exactly its chunks), documents ready
 * before the kill are not ingested again, and each `document.ready` webhook arrives at least once,
 * with one event id however often it is repeated.
 *
 * The embedding model is a fake OpenAI-compatible endpoint (the wire level, as provider tests do)
 * that answers each request after 500 ms until the kill: with dev:hash, ingestion keeps pace with
 * the uploads and nothing would be left to kill mid-way. After the restart it answers at once.
 */
import { afterAll, expect, test } from "bun:test";
import type { KnowledgeDocument } from "@promptrun/contract";
import { startFakeEmbeddings } from "./support/fake-embeddings.ts";
import {
  addTextDocument,
  createKnowledgeBase,
  getKnowledgeBase,
  listDocuments,
  search,
  waitUntilReady,
} from "./support/knowledge.ts";
import { startServer, type TestServer } from "./support/server.ts";
import { listTables } from "./support/tables.ts";
import { addWebhook, startWebhookReceiver } from "./support/webhook-receiver.ts";

const COUNT = 50;
const CHUNKING = { maxTokens: 512, overlap: 64 };
const EMBEDDING = "slowemb:v1";

/** A word of letters only, its own to document i (no stemmer changes a word ending in z). */
const wordOf = (index: number) =>
  `kw${String.fromCharCode(97 + Math.floor(index / 26))}${String.fromCharCode(97 + (index % 26))}z`;

/**
 * ~11,000 tokens (about 24 chunks of 512): large enough that 50 of them take a while to ingest,
 * small enough that a search (topK ≤ 50) can list every chunk. Every sentence names the document's
 * word, so every chunk holds it.
 */
const textOf = (index: number) =>
  Array.from(
    { length: 600 },
    (_, line) =>
      `Record ${line} of ${wordOf(index)} notes that harbour ${wordOf(index)} logged tide ${line * 7 + index} at noon.`,
  ).join(" ");

let server: TestServer | undefined;
const receiver = startWebhookReceiver();
const embeddings = startFakeEmbeddings(500);
afterAll(async () => {
  receiver.stop();
  embeddings.stop();
  await server?.dispose();
});

/** Tables with a chunk's (document_id, ordinal): wherever the store keeps chunks. */
async function chunkTables(target: TestServer): Promise<string[]> {
  const found: string[] = [];
  for (const table of await listTables(target)) {
    try {
      await target.sql(`select document_id, ordinal from ${table} limit 1`);
      found.push(table);
    } catch {
      // not a chunk table
    }
  }
  return found;
}

test("SIGKILL mid-ingestion of 50 documents: all end ready, none lost, no duplicate chunk, webhooks at least once", async () => {
  server = await startServer({
    env: {
      PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: "0.5,0.5,0.5,0.5",
      PROMPTRUN_PROVIDERS: embeddings.provider("slowemb"),
    },
  });
  await addWebhook(server, server.tenantId, receiver, ["document.ready"]);
  await createKnowledgeBase(server, { slug: "crashy", embeddingModel: EMBEDDING, chunking: CHUNKING });
  const live = server;
  const ids = await Promise.all(
    Array.from({ length: COUNT }, (_, index) =>
      addTextDocument(live, "crashy", { text: textOf(index), filename: `doc-${index}.txt` }),
    ),
  );

  // The known point: some documents ready, the others not yet.
  const deadline = Date.now() + 60_000;
  let readyAtKill: KnowledgeDocument[] = [];
  while (readyAtKill.length === 0) {
    if (Date.now() > deadline) throw new Error("no document became ready within 60 s");
    await Bun.sleep(10);
    readyAtKill = (await listDocuments(server, "crashy")).filter((document) => document.status === "ready");
  }
  await server.kill();
  embeddings.delayMs = 0;
  expect(readyAtKill.length, "ingestion finished before the kill: make the documents larger").toBeLessThan(
    COUNT,
  );
  server = await server.restart();

  const documents: KnowledgeDocument[] = [];
  for (const id of ids) documents.push(await waitUntilReady(server, "crashy", id, 120_000));
  expect(documents.map((document) => document.status)).toEqual(ids.map(() => "ready"));
  // Ready before the kill: not ingested again (the same readyAt).
  const finished = new Map(documents.map((document) => [document.id, document]));
  for (const document of readyAtKill)
    expect(finished.get(document.id)).toMatchObject({
      readyAt: document.readyAt,
      chunkCount: document.chunkCount,
    });

  // A clean ingestion of the same texts on the restarted server: the chunk counts to expect.
  await createKnowledgeBase(server, { slug: "clean", embeddingModel: EMBEDDING, chunking: CHUNKING });
  const cleanIds: string[] = [];
  for (let index = 0; index < COUNT; index++)
    cleanIds.push(
      await addTextDocument(server, "clean", { text: textOf(index), filename: `doc-${index}.txt` }),
    );
  const clean: KnowledgeDocument[] = [];
  for (const id of cleanIds) clean.push(await waitUntilReady(server, "clean", id, 120_000));
  expect(documents.map((document) => [document.filename, document.chunkCount, document.tokens])).toEqual(
    clean.map((document) => [document.filename, document.chunkCount, document.tokens]),
  );
  const crashy = await getKnowledgeBase(server, "crashy");
  const reference = await getKnowledgeBase(server, "clean");
  expect(crashy.documentCount).toBe(COUNT);
  expect(crashy.chunkCount).toBe(reference.chunkCount);
  expect(crashy.chunkCount).toBe(clean.reduce((sum, document) => sum + document.chunkCount, 0));

  // No duplicate chunk: a document's own word finds exactly its chunks, each once.
  for (const [index, document] of documents.entries()) {
    expect(document.chunkCount).toBeLessThanOrEqual(50);
    const hits = await search(server, "crashy", { query: wordOf(index), mode: "keyword", topK: 50 });
    expect({ index, documents: [...new Set(hits.map((hit) => hit.documentId))] }).toEqual({
      index,
      documents: [document.id],
    });
    expect(new Set(hits.map((hit) => hit.chunkId)).size).toBe(hits.length);
    expect({ index, hits: hits.length }).toEqual({ index, hits: document.chunkCount });
  }
  // And in the database: one row per (document, ordinal).
  const tables = await chunkTables(server);
  if (tables.length === 0)
    console.warn("no table with (document_id, ordinal) found: the SQL duplicate check was skipped");
  for (const table of tables) {
    const duplicates = await server.sql(
      `select document_id, ordinal, count(*) as n from ${table} group by document_id, ordinal having count(*) > 1`,
    );
    expect({ table, duplicates }).toEqual({ table, duplicates: [] });
  }

  // document.ready: each at least once (deliveries pending at the kill go out after the restart),
  // signed, and one event id per document however often it arrived.
  const wanted = new Set(ids);
  const deliveriesOf = (id: string) =>
    receiver.received.filter(
      (delivery) => delivery.payload.type === "document.ready" && delivery.payload.data.id === id,
    );
  const webhookDeadline = Date.now() + 60_000;
  while ([...wanted].some((id) => deliveriesOf(id).length === 0)) {
    if (Date.now() > webhookDeadline)
      throw new Error(
        `no document.ready for ${[...wanted].filter((id) => deliveriesOf(id).length === 0).length} documents`,
      );
    await Bun.sleep(50);
  }
  for (const id of ids) {
    const deliveries = deliveriesOf(id);
    expect(deliveries.every((delivery) => delivery.verified)).toBe(true);
    expect(new Set(deliveries.map((delivery) => delivery.id)).size).toBe(1);
    expect(deliveries[0]!.payload.data).toMatchObject({ id, knowledgeBase: "crashy", status: "ready" });
  }
}, 360_000);
