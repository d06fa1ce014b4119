/**
 * Knowledge bases over the real REST API (docs/KNOWLEDGE.md): create one, add documents as JSON
 * text or multipart files, wait for ingestion, search. Every call checks its status and says
 * what the server answered when it is not the expected one.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { KnowledgeBase, KnowledgeDocument, SearchHit } from "@promptrun/contract";
import { api, type TestServer } from "./server.ts";

type Caller = Pick<TestServer, "url" | "apiKey">;

/** tests/fixtures/knowledge: the PDF and DOCX fixtures (real files, made once, committed). */
export const KNOWLEDGE_FIXTURES = resolve(import.meta.dir, "../fixtures/knowledge");

/** A fixture's bytes, or null when it is not in this checkout (the test then says so and skips). */
export function readFixture(name: string): Uint8Array | null {
  const path = resolve(KNOWLEDGE_FIXTURES, name);
  return existsSync(path) ? new Uint8Array(readFileSync(path)) : null;
}

export const kbPath = (slug: string, rest = "") =>
  `/api/v1/knowledge-bases/${encodeURIComponent(slug)}${rest}`;

async function expectStatus(response: Response, status: number, what: string): Promise<unknown> {
  const text = await response.text();
  if (response.status !== status)
    throw new Error(`${what}: expected ${status}, got ${response.status}: ${text.slice(0, 500)}`);
  return text === "" ? null : JSON.parse(text);
}

export async function createKnowledgeBase(
  server: Caller,
  body: Record<string, unknown>,
): Promise<KnowledgeBase> {
  const response = await api(server, "/api/v1/knowledge-bases", { method: "POST", json: body });
  return (await expectStatus(response, 201, `create knowledge base ${String(body.slug)}`)) as KnowledgeBase;
}

export interface TextDocument {
  text: string;
  filename: string;
  mediaType?: string;
  metadata?: Record<string, unknown>;
  externalId?: string;
}

/** POST …/documents as JSON → 202 {id, status: "pending"}. */
export async function addTextDocument(server: Caller, slug: string, document: TextDocument): Promise<string> {
  const response = await api(server, kbPath(slug, "/documents"), { method: "POST", json: document });
  const accepted = (await expectStatus(response, 202, `add ${document.filename}`)) as {
    id: string;
    status: string;
  };
  if (accepted.status !== "pending") throw new Error(`add ${document.filename}: status ${accepted.status}`);
  return accepted.id;
}

export interface FileUpload {
  filename: string;
  content: Uint8Array;
  /** The part's Content-Type (what a browser would send); none when omitted. */
  type?: string;
  metadata?: Record<string, unknown>;
  externalId?: string;
}

/** POST …/documents as multipart/form-data; returns the raw response (tests check 202/413/415). */
export function uploadFile(server: Caller, slug: string, file: FileUpload): Promise<Response> {
  const form = new FormData();
  const bytes = new Uint8Array(file.content);
  form.set("file", new File([bytes], file.filename, file.type ? { type: file.type } : {}));
  if (file.metadata) form.set("metadata", JSON.stringify(file.metadata));
  if (file.externalId) form.set("externalId", file.externalId);
  return api(server, kbPath(slug, "/documents"), { method: "POST", body: form });
}

/** uploadFile, expecting 202; returns the document id. */
export async function addFileDocument(server: Caller, slug: string, file: FileUpload): Promise<string> {
  const accepted = (await expectStatus(
    await uploadFile(server, slug, file),
    202,
    `upload ${file.filename}`,
  )) as { id: string };
  return accepted.id;
}

export async function getDocument(server: Caller, slug: string, id: string): Promise<KnowledgeDocument> {
  const response = await api(server, kbPath(slug, `/documents/${id}`));
  return (await expectStatus(response, 200, `get document ${id}`)) as KnowledgeDocument;
}

/** Polls GET …/documents/{id} until the document is ready or failed. */
export async function waitForDocument(
  server: Caller,
  slug: string,
  id: string,
  timeoutMs = 60_000,
): Promise<KnowledgeDocument> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const document = await getDocument(server, slug, id);
    if (document.status === "ready" || document.status === "failed") return document;
    if (Date.now() > deadline)
      throw new Error(`document ${id} (${document.filename}) still ${document.status} after ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

/** waitForDocument, and it must have become ready (a failure names its error). */
export async function waitUntilReady(
  server: Caller,
  slug: string,
  id: string,
  timeoutMs = 60_000,
): Promise<KnowledgeDocument> {
  const document = await waitForDocument(server, slug, id, timeoutMs);
  if (document.status !== "ready")
    throw new Error(`document ${document.filename} ended ${document.status}: ${document.error}`);
  return document;
}

export function searchRaw(server: Caller, slug: string, body: unknown): Promise<Response> {
  return api(server, kbPath(slug, "/search"), { method: "POST", json: body });
}

export async function search(
  server: Caller,
  slug: string,
  body: { query: string; mode?: "keyword" | "vector" | "hybrid"; topK?: number; filter?: unknown },
): Promise<SearchHit[]> {
  const response = await searchRaw(server, slug, body);
  return ((await expectStatus(response, 200, `search ${slug} for "${body.query}"`)) as { items: SearchHit[] })
    .items;
}

export async function getKnowledgeBase(server: Caller, slug: string): Promise<KnowledgeBase> {
  return (await expectStatus(
    await api(server, kbPath(slug)),
    200,
    `get knowledge base ${slug}`,
  )) as KnowledgeBase;
}

/** Every document of a knowledge base (all pages). */
export async function listDocuments(server: Caller, slug: string): Promise<KnowledgeDocument[]> {
  const documents: KnowledgeDocument[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `?limit=200&cursor=${encodeURIComponent(cursor)}` : "?limit=200";
    const page = (await expectStatus(
      await api(server, kbPath(slug, `/documents${query}`)),
      200,
      `list documents of ${slug}`,
    )) as { items: KnowledgeDocument[]; nextCursor: string | null };
    documents.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return documents;
}

/**
 * Waits until the demo knowledge base's documents (seeded with the demo tenant) are ingested:
 * their first ingestion loads the tokenizer (tens of MB), which a test measuring the server's
 * memory must not count as its own.
 */
export async function demoKnowledgeIngested(server: TestServer, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await api(server, kbPath("acme-docs", "/documents?limit=200"));
    if (response.status === 404) return; // not seeded (dev model off): nothing to wait for
    const page = (await response.json()) as { items: KnowledgeDocument[] };
    if (page.items.every((document) => document.status === "ready" || document.status === "failed")) return;
    if (Date.now() > deadline) throw new Error("the demo knowledge base was not ingested in time");
    await Bun.sleep(50);
  }
}
