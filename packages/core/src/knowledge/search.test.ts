import { beforeEach, expect, test } from "bun:test";
import type { Metadata, ParsedSearchRequest } from "@promptrun/contract";
import type { Store } from "../ports.ts";
import { uuidv7 } from "../services/uuidv7.ts";
import { addTenant, createMemoryStore, manualClock } from "../testing/index.ts";
import type { EmbeddingModel, KnowledgeBaseRecord, KnowledgeStore } from "./ports.ts";
import { createKnowledgeSearch, hybridCandidates, reciprocalRankFusion } from "./search.ts";
import { createVectorIndex, MinHeap } from "./vector-index.ts";

const tenant = "00000000-0000-4000-8000-00000000000a";
const clock = manualClock();

/** Query and chunk vectors chosen by hand (normalised by search/ingestion anyway). */
const VECTORS: Record<string, number[]> = {
  apple: [1, 0, 0, 0],
  "apple apple apple": [0, 0, 0, 1],
  "apple pie": [0.8, 0.6, 0, 0],
  banana: [1, 0, 0, 0],
  cherry: [0.5, 0, 0.866, 0],
  "apple strudel": [0.9, 0.1, 0, 0],
};

const tableModel = (): EmbeddingModel & { calls: number } => {
  const model = {
    ref: "table:v1",
    calls: 0,
    async embed(texts: string[]) {
      model.calls++;
      return {
        vectors: texts.map((text) => new Float32Array(VECTORS[text] ?? [0, 0, 1, 0])),
        tokens: 7,
        cost: { total: 0.0002, priced: true },
      };
    },
  };
  return model;
};

let store: Store;
let base: KnowledgeBaseRecord;

beforeEach(async () => {
  store = createMemoryStore({ clock });
  await addTenant(store, "acme", tenant);
  base = {
    id: uuidv7(),
    tenantId: tenant,
    slug: "fruit",
    description: null,
    embeddingModel: "table:v1",
    chunking: { maxTokens: 512, overlap: 64 },
    createdAt: clock.now(),
  };
  await store.knowledge.createKnowledgeBase(base);
});

/** A ready document with one chunk per text (vectors from VECTORS); returns the chunk ids by text. */
async function ready(texts: string[], metadata: Metadata = {}): Promise<Record<string, string>> {
  const id = uuidv7();
  clock.advance(1);
  await store.knowledge.addDocument({
    id,
    tenantId: tenant,
    knowledgeBaseId: base.id,
    knowledgeBaseSlug: base.slug,
    externalId: null,
    filename: `${texts[0]}.txt`,
    mediaType: "text/plain",
    metadata,
    bytes: 10,
    createdAt: clock.now(),
    content: new Uint8Array([1]),
  });
  const claimed = await store.knowledge.claimDocument(
    "test",
    new Date(clock.now().getTime() + 30_000),
    clock.now(),
  );
  expect(claimed?.document.id).toBe(id);
  const chunks = texts.map((text, ordinal) => {
    const vector = new Float32Array(VECTORS[text] ?? [0, 0, 1, 0]);
    const norm = Math.hypot(...vector);
    return {
      id: uuidv7(),
      documentId: id,
      ordinal,
      text,
      tokens: 1,
      embedding: vector.map((value) => value / norm),
    };
  });
  const written = await store.knowledge.completeDocument(id, "test", {
    chunks,
    tokens: texts.length,
    cost: { total: 0, priced: true },
    readyAt: clock.now(),
    outbox: () => [],
  });
  expect(written?.status).toBe("ready");
  return Object.fromEntries(chunks.map((chunk) => [chunk.text, chunk.id]));
}

const request = (query: string, rest: Partial<ParsedSearchRequest> = {}): ParsedSearchRequest => ({
  query,
  topK: 5,
  mode: "hybrid",
  ...rest,
});

test("keyword search: term frequency over lower-cased words, any word matching; free", async () => {
  const ids = await ready(["apple apple apple", "apple pie", "banana", "cherry"]);
  const search = createKnowledgeSearch({ store: store.knowledge, resolveEmbeddingModel: () => tableModel() });
  const outcome = await search.search(tenant, "fruit", request("APPLE, Banana!", { mode: "keyword" }));
  expect(outcome.hits.map((hit) => [hit.text, hit.score])).toEqual([
    ["apple apple apple", 3],
    ["apple pie", 1],
    ["banana", 1],
  ]);
  expect(outcome.hits[0]).toEqual({
    chunkId: ids["apple apple apple"] as string,
    documentId: expect.any(String),
    filename: "apple apple apple.txt",
    text: "apple apple apple",
    score: 3,
    metadata: {},
  });
  expect(outcome).toMatchObject({ cost: { total: 0, priced: true }, tokens: 0 });
  // Query syntax is never an error.
  const odd = await search.search(tenant, "fruit", request('"(* OR AND NEAR', { mode: "keyword" }));
  expect(odd.hits).toEqual([]);
});

test("vector search: cosine similarity, best first, with the query's embedding cost", async () => {
  await ready(["apple apple apple", "apple pie", "banana", "cherry"]);
  const model = tableModel();
  const search = createKnowledgeSearch({ store: store.knowledge, resolveEmbeddingModel: () => model });
  const outcome = await search.search(tenant, "fruit", request("apple", { mode: "vector", topK: 3 }));
  expect(outcome.hits.map((hit) => hit.text)).toEqual(["banana", "apple pie", "cherry"]);
  expect(outcome.hits.map((hit) => Math.round(hit.score * 1000) / 1000)).toEqual([1, 0.8, 0.5]);
  expect(outcome).toMatchObject({ cost: { total: 0.0002, priced: true }, tokens: 7 });
  expect(model.calls).toBe(1);
});

test("hybrid search ranks a chunk found high by both lists first (RRF, k = 60)", async () => {
  await ready(["apple apple apple", "apple pie", "banana", "cherry"]);
  const search = createKnowledgeSearch({ store: store.knowledge, resolveEmbeddingModel: () => tableModel() });
  const outcome = await search.search(tenant, "fruit", request("apple"));
  // keyword: [apple apple apple, apple pie]; vector: [banana, apple pie, cherry, apple apple apple].
  expect(outcome.hits.map((hit) => hit.text)).toEqual(["apple pie", "apple apple apple", "banana", "cherry"]);
  expect(outcome.hits[0]?.score).toBeCloseTo(2 / 62, 12);
  expect(outcome.hits[1]?.score).toBeCloseTo(1 / 61 + 1 / 64, 12);
  expect(outcome.hits[2]?.score).toBeCloseTo(1 / 61, 12);
  const two = await search.search(tenant, "fruit", request("apple", { topK: 2 }));
  expect(two.hits.map((hit) => hit.text)).toEqual(["apple pie", "apple apple apple"]);
});

test("a metadata filter narrows every mode; an unknown knowledge base is not_found", async () => {
  await ready(["apple pie"], { team: "bakery", tags: ["sweet", "warm"] });
  await ready(["apple strudel"], { team: "cafe" });
  await ready(["apple apple apple"]);
  const search = createKnowledgeSearch({ store: store.knowledge, resolveEmbeddingModel: () => tableModel() });
  for (const mode of ["keyword", "vector", "hybrid"] as const) {
    const bakery = await search.search(
      tenant,
      "fruit",
      request("apple", { mode, filter: { team: "bakery" } }),
    );
    expect(bakery.hits.map((hit) => hit.text)).toEqual(["apple pie"]);
    const tagged = await search.search(
      tenant,
      "fruit",
      request("apple", { mode, filter: { tags: { in: ["warm", "x"] } } }),
    );
    expect(tagged.hits.map((hit) => hit.text)).toEqual(["apple pie"]);
    const teams = await search.search(
      tenant,
      "fruit",
      request("apple", { mode, filter: { team: { in: ["bakery", "cafe"] } } }),
    );
    expect(teams.hits.map((hit) => hit.text).sort()).toEqual(["apple pie", "apple strudel"]);
    const none = await search.search(tenant, "fruit", request("apple", { mode, filter: { team: "nobody" } }));
    expect(none.hits).toEqual([]);
  }
  await expect(
    search.search("00000000-0000-4000-8000-00000000000b", "fruit", request("apple")),
  ).rejects.toMatchObject({
    code: "not_found",
  });
});

test("the vector index loads once per generation and reloads when chunks change", async () => {
  await ready(["apple pie"]);
  let loads = 0;
  const counting: KnowledgeStore = {
    ...store.knowledge,
    loadVectors: (id) => {
      loads++;
      return store.knowledge.loadVectors(id);
    },
  };
  const index = createVectorIndex({ store: counting });
  const search = createKnowledgeSearch({
    store: counting,
    resolveEmbeddingModel: () => tableModel(),
    vectorIndex: index,
  });
  const vector = request("apple", { mode: "vector" });
  expect((await search.search(tenant, "fruit", vector)).hits.map((hit) => hit.text)).toEqual(["apple pie"]);
  await search.search(tenant, "fruit", vector);
  expect(loads).toBe(1);
  expect(index.bytes()).toBe(4 * 4 + 104);

  const added = await ready(["banana"]);
  expect((await search.search(tenant, "fruit", vector)).hits.map((hit) => hit.text)).toEqual([
    "banana",
    "apple pie",
  ]);
  expect(loads).toBe(2);

  const banana = (await store.knowledge.getChunks(base.id, [added.banana as string]))[0];
  await store.knowledge.deleteDocument(tenant, base.id, banana?.documentId ?? "");
  expect((await search.search(tenant, "fruit", vector)).hits.map((hit) => hit.text)).toEqual(["apple pie"]);
  expect(loads).toBe(3);
});

test("the vector index drops the least recently searched knowledge base past its byte budget", async () => {
  await ready(["apple pie"]);
  const first = base;
  const second = { ...base, id: uuidv7(), slug: "more" };
  await store.knowledge.createKnowledgeBase(second);
  base = second;
  await ready(["banana"]);
  base = first;
  let loads = 0;
  const counting: KnowledgeStore = {
    ...store.knowledge,
    loadVectors: (id) => {
      loads++;
      return store.knowledge.loadVectors(id);
    },
  };
  const index = createVectorIndex({ store: counting, maxBytes: 150 });
  const query = new Float32Array([1, 0, 0, 0]);
  // 120 bytes each (one 4-dimension chunk): both do not fit in 150.
  expect((await index.search(first.id, query, 5)).length).toBe(1);
  await index.search(first.id, query, 5);
  expect(loads).toBe(1);
  await index.search(second.id, query, 5);
  expect(index.bytes()).toBe(120);
  expect((await index.search(first.id, query, 5)).length).toBe(1);
  expect(loads).toBe(3);
});

test("reciprocal rank fusion and the candidate depth", () => {
  const fused = reciprocalRankFusion([
    [{ chunkId: "a" }, { chunkId: "b" }],
    [{ chunkId: "b" }, { chunkId: "c" }],
  ]);
  expect(fused.map((item) => item.chunkId)).toEqual(["b", "a", "c"]);
  expect(fused[0]?.score).toBeCloseTo(1 / 62 + 1 / 61, 12);
  expect(hybridCandidates(5)).toBe(50);
  expect(hybridCandidates(50)).toBe(200);
});

test("the bounded heap keeps exactly the top k of a shuffled list", () => {
  const scores = Array.from({ length: 1_000 }, (_, index) => Math.sin(index * 7.3));
  const heap = new MinHeap(10);
  scores.forEach((score, row) => {
    heap.offer(row, score);
  });
  const expected = scores
    .map((score, row) => ({ row, score }))
    .sort((a, b) => b.score - a.score)
    .slice(0, 10);
  expect(heap.sortedDescending()).toEqual(expected);
});

test("the vector index scan equals a brute-force cosine ranking (odd dimensions, filtered)", async () => {
  const rows = 300;
  const dimensions = 7;
  const vectors = new Float32Array(rows * dimensions).map((_, index) => Math.sin(index * 1.7));
  const chunkIds = Array.from({ length: rows }, (_, row) => `chunk-${row}`);
  const documentIds = Array.from({ length: rows }, (_, row) => `doc-${row % 10}`);
  const index = createVectorIndex({
    store: {
      vectorGeneration: async () => "1",
      loadVectors: async () => ({ generation: "1", chunkIds, documentIds, dimensions, vectors }),
    },
  });
  const query = new Float32Array([0.3, -0.2, 0.9, 0.1, 0, -0.5, 0.4]);
  const brute = (allowed: (row: number) => boolean) =>
    chunkIds
      .map((chunkId, row) => {
        let dot = 0;
        for (let d = 0; d < dimensions; d++)
          dot += (vectors[row * dimensions + d] as number) * (query[d] as number);
        return { chunkId, documentId: documentIds[row] as string, score: dot, row };
      })
      .filter((item) => allowed(item.row))
      .sort((a, b) => b.score - a.score)
      .slice(0, 12)
      .map(({ chunkId, documentId, score }) => ({ chunkId, documentId, score }));
  const found = await index.search("kb", query, 12);
  expect(found.map((item) => item.chunkId)).toEqual(brute(() => true).map((item) => item.chunkId));
  found.forEach((item, position) => {
    expect(item.score).toBeCloseTo(brute(() => true)[position]?.score ?? Number.NaN, 5);
  });
  const filtered = await index.search("kb", query, 12, new Set(["doc-3", "doc-4"]));
  expect(filtered.map((item) => item.chunkId)).toEqual(
    brute((row) => row % 10 === 3 || row % 10 === 4).map((item) => item.chunkId),
  );
});
