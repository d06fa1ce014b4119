/**
 * Section "Knowledge-base retrieval" (docs/KNOWLEDGE.md): in process, on a SQLite file, through
 * the real knowledge service and ingestion worker (`createPromptrun`) with the keyless dev:hash
 * embedding.
 *
 * - Ingest rate: Markdown documents added through the service until every one is ready; a page is
 *   3,000 characters.
 * - Search latency p50/p99 for keyword, vector and hybrid at 10k and 100k chunks. The chunks are
 *   written straight through the store's ingestion port (addDocument → claimDocument →
 *   completeDocument, as the worker does) with dev:hash vectors: real chunk vectors of an ingested
 *   pool, copied once and then moved by a little noise, so 100k chunks take seconds, not minutes.
 * - Exactness: vector search is an exact scan, so its recall is 1.0 by construction; it is measured
 *   against a brute-force reference over the stored vectors. The query is the text of a pool chunk,
 *   whose dev:hash vector the bench holds; the scores the search returns must equal the reference's
 *   (that proves the query vector was the same).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import {
  createPromptrun,
  defaultConfig,
  type KnowledgeService,
  type Promptrun,
  type Store,
  uuidv7,
} from "@promptrun/core";
import { openStore } from "@promptrun/db";
import { formatCount, formatMs } from "./format.ts";
import { markdownTable } from "./markdown-table.ts";
import { markdownDocument, perturbed, seededRandom, vocabulary, ZipfWords } from "./retrieval-corpus.ts";
import { bruteForceTopK, percentile, recallAgainstReference } from "./retrieval-exact.ts";
import type { BenchContext, SectionResult, TargetCheck } from "./sections/bench-context.ts";

export const RETRIEVAL_TITLE = "6. Knowledge-base retrieval (ingest rate, search latency, exactness)";

const PAGE_CHARS = 3_000;
const MODES = ["keyword", "vector", "hybrid"] as const;
type Mode = (typeof MODES)[number];
const TOP_K = 10;
/** Chunks per document when the corpus is written through the store. */
const CHUNKS_PER_DOCUMENT = 500;
const FILL_OWNER = "bench-fill";

type KnowledgeBase = Awaited<ReturnType<KnowledgeService["create"]>>;

interface Bench {
  promptrun: Promptrun;
  store: Store;
  tenantId: string;
  words: ZipfWords;
  random: () => number;
}

interface IngestResult {
  documents: number;
  pages: number;
  chunks: number;
  megabytes: number;
  seconds: number;
}

interface VectorPool {
  texts: string[];
  vectors: Float32Array[];
}

interface LatencyRow {
  chunks: number;
  mode: Mode;
  queries: number;
  p50: number;
  p99: number;
  mean: number;
}

interface ExactRow {
  chunks: number;
  dimensions: number;
  queries: number;
  recall: number;
  maxScoreError: number;
  bruteForceMs: number;
  indexLoadMs: number;
  buildSeconds: number;
}

async function openBench(directory: string): Promise<Bench> {
  const store = await openStore(`file:${join(directory, "retrieval.db")}`);
  const promptrun = createPromptrun({
    store,
    // The searches are timed back to back: the per-tenant search bucket must not throttle them.
    config: defaultConfig({
      secret: "retrieval-bench-".repeat(4),
      rateLimit: { perSecond: 1_000_000, burst: 1_000_000 },
    }),
  });
  await promptrun.start();
  const { tenant } = await promptrun.services.tenants.create("retrieval-bench");
  const random = seededRandom(20_260_101);
  return {
    promptrun,
    store,
    tenantId: tenant.id,
    words: new ZipfWords(vocabulary(20_000, random), random),
    random,
  };
}

/** Polls until every document is ready; throws naming the first that failed. */
async function waitUntilReady(bench: Bench, slug: string, ids: string[], timeoutMs: number): Promise<Date> {
  const deadline = Date.now() + timeoutMs;
  let lastReady = new Date(0);
  for (const id of ids) {
    for (;;) {
      const document = await bench.promptrun.services.knowledge.getDocument(bench.tenantId, slug, id);
      if (document.status === "failed") throw new Error(`${document.filename} failed: ${document.error}`);
      if (document.status === "ready") {
        const readyAt = new Date(document.readyAt ?? Date.now());
        if (readyAt > lastReady) lastReady = readyAt;
        break;
      }
      if (Date.now() > deadline)
        throw new Error(`${document.filename} still ${document.status} after ${timeoutMs} ms`);
      await Bun.sleep(20);
    }
  }
  return lastReady;
}

async function createKnowledgeBase(bench: Bench, slug: string, chunking?: object): Promise<KnowledgeBase> {
  return bench.promptrun.services.knowledge.create(bench.tenantId, {
    slug,
    embeddingModel: "dev:hash",
    ...(chunking ? { chunking } : {}),
  });
}

/** Adds Markdown documents through the service and times them until ready. */
async function ingest(
  bench: Bench,
  slug: string,
  documents: number,
  pagesEach: number,
): Promise<IngestResult> {
  const texts = Array.from({ length: documents }, () =>
    markdownDocument(bench.words, bench.random, pagesEach * PAGE_CHARS),
  );
  const encoder = new TextEncoder();
  const started = new Date();
  const ids: string[] = [];
  for (const [index, text] of texts.entries()) {
    const accepted = await bench.promptrun.services.knowledge.addDocument(bench.tenantId, slug, {
      content: encoder.encode(text),
      filename: `doc-${index}.md`,
      mediaType: "text/markdown",
    });
    ids.push(accepted.id);
  }
  const finished = await waitUntilReady(bench, slug, ids, 15 * 60_000);
  const knowledgeBase = await bench.promptrun.services.knowledge.get(bench.tenantId, slug);
  const characters = texts.reduce((sum, text) => sum + text.length, 0);
  return {
    documents,
    pages: characters / PAGE_CHARS,
    chunks: knowledgeBase.chunkCount,
    megabytes: texts.reduce((sum, text) => sum + encoder.encode(text).length, 0) / 1_048_576,
    seconds: (finished.getTime() - started.getTime()) / 1000,
  };
}

/** The chunk texts and dev:hash vectors of an ingested knowledge base (small chunks: short queries). */
async function vectorPool(bench: Bench, slug: string): Promise<VectorPool> {
  const knowledgeBase = await bench.promptrun.services.knowledge.get(bench.tenantId, slug);
  const stored = await bench.store.knowledge.loadVectors(knowledgeBase.id);
  const texts = new Map<string, string>();
  for (let start = 0; start < stored.chunkIds.length; start += 500) {
    const views = await bench.store.knowledge.getChunks(
      knowledgeBase.id,
      stored.chunkIds.slice(start, start + 500),
    );
    for (const view of views) texts.set(view.chunkId, view.text);
  }
  const pool: VectorPool = { texts: [], vectors: [] };
  stored.chunkIds.forEach((chunkId, row) => {
    const text = texts.get(chunkId);
    if (text === undefined || Buffer.byteLength(text) > 4_000) return;
    pool.texts.push(text);
    pool.vectors.push(stored.vectors.slice(row * stored.dimensions, (row + 1) * stored.dimensions));
  });
  if (pool.texts.length < 100) throw new Error(`the vector pool has only ${pool.texts.length} chunks`);
  return pool;
}

/** One document of `count` chunks written as the worker would: added, claimed, completed in one transaction. */
async function writeDocument(
  bench: Bench,
  knowledgeBase: KnowledgeBase,
  chunks: Array<{ text: string; embedding: Float32Array }>,
) {
  const id = uuidv7();
  const now = new Date();
  await bench.store.knowledge.addDocument({
    id,
    tenantId: bench.tenantId,
    knowledgeBaseId: knowledgeBase.id,
    knowledgeBaseSlug: knowledgeBase.slug,
    externalId: null,
    filename: `fill-${id}.md`,
    mediaType: "text/markdown",
    metadata: {},
    bytes: chunks.reduce((sum, chunk) => sum + chunk.text.length, 0),
    createdAt: now,
    content: new TextEncoder().encode("written by the bench"),
  });
  const claimed = await bench.store.knowledge.claimDocument(
    FILL_OWNER,
    new Date(now.getTime() + 600_000),
    now,
  );
  if (claimed?.document.id !== id)
    throw new Error(`claimed ${claimed?.document.id ?? "nothing"} instead of ${id}`);
  const records = chunks.map((chunk, ordinal) => ({
    id: uuidv7(),
    documentId: id,
    ordinal,
    text: chunk.text,
    tokens: Math.ceil(chunk.text.length / 4),
    embedding: chunk.embedding,
  }));
  const completed = await bench.store.knowledge.completeDocument(id, FILL_OWNER, {
    chunks: records,
    tokens: records.reduce((sum, record) => sum + record.tokens, 0),
    cost: { total: 0, priced: true },
    readyAt: new Date(),
    outbox: () => [],
  });
  if (!completed) throw new Error(`completeDocument refused ${id}`);
}

/**
 * A knowledge base of `size` chunks: the pool once as is (the recall queries' exact matches),
 * then noisy neighbours of it, each text tagged with a word of its own.
 */
async function buildCorpus(
  bench: Bench,
  slug: string,
  size: number,
  pool: VectorPool,
): Promise<KnowledgeBase> {
  const knowledgeBase = await createKnowledgeBase(bench, slug);
  for (let start = 0; start < size; start += CHUNKS_PER_DOCUMENT) {
    const chunks = Array.from({ length: Math.min(CHUNKS_PER_DOCUMENT, size - start) }, (_, offset) => {
      const index = start + offset;
      const base = index % pool.texts.length;
      const embedding =
        index < pool.texts.length ? pool.vectors[base]! : perturbed(pool.vectors[base]!, 0.6, bench.random);
      return { text: `${pool.texts[base]!} ${bench.words.next()} ${bench.words.next()}`, embedding };
    });
    await writeDocument(bench, knowledgeBase, chunks);
  }
  return knowledgeBase;
}

/** Sequential searches of one mode; each query three words of middling frequency. */
async function timeSearches(
  bench: Bench,
  slug: string,
  mode: Mode,
  queries: number,
  chunks: number,
): Promise<LatencyRow> {
  const timings: number[] = [];
  const search = (query: string) =>
    bench.promptrun.services.knowledge.search(bench.tenantId, slug, { query, mode, topK: TOP_K });
  for (let warm = 0; warm < 5; warm++) await search(bench.words.queryWord());
  for (let index = 0; index < queries; index++) {
    const query = `${bench.words.queryWord()} ${bench.words.queryWord()} ${bench.words.queryWord()}`;
    const started = performance.now();
    const { items } = await search(query);
    timings.push(performance.now() - started);
    if (mode !== "keyword" && items.length !== TOP_K)
      throw new Error(`${mode} search returned ${items.length} hits`);
  }
  return {
    chunks,
    mode,
    queries,
    p50: percentile(timings, 50),
    p99: percentile(timings, 99),
    mean: timings.reduce((sum, value) => sum + value, 0) / timings.length,
  };
}

/** Vector search against the brute-force reference over every stored vector of the knowledge base. */
async function measureExactness(
  bench: Bench,
  knowledgeBase: KnowledgeBase,
  pool: VectorPool,
  queries: number,
): Promise<Omit<ExactRow, "buildSeconds" | "indexLoadMs">> {
  const stored = await bench.store.knowledge.loadVectors(knowledgeBase.id);
  const rowOf = new Map(stored.chunkIds.map((chunkId, row) => [chunkId, row]));
  let recallSum = 0;
  let maxScoreError = 0;
  const bruteTimes: number[] = [];
  for (let index = 0; index < queries; index++) {
    const pick = Math.floor(bench.random() * pool.texts.length);
    const query = pool.vectors[pick]!;
    const { items } = await bench.promptrun.services.knowledge.search(bench.tenantId, knowledgeBase.slug, {
      query: pool.texts[pick]!,
      mode: "vector",
      topK: TOP_K,
    });
    const started = performance.now();
    const reference = bruteForceTopK(stored.vectors, stored.dimensions, query, TOP_K);
    bruteTimes.push(performance.now() - started);
    const check = recallAgainstReference(items, reference, rowOf, stored.vectors, stored.dimensions, query);
    recallSum += check.recall;
    maxScoreError = Math.max(maxScoreError, check.maxScoreError);
  }
  return {
    chunks: stored.chunkIds.length,
    dimensions: stored.dimensions,
    queries,
    recall: recallSum / queries,
    maxScoreError,
    bruteForceMs: percentile(bruteTimes, 50),
  };
}

/** The first vector search of a knowledge base loads its vectors into the in-memory index. */
async function firstVectorSearchMs(bench: Bench, slug: string): Promise<number> {
  const started = performance.now();
  await bench.promptrun.services.knowledge.search(bench.tenantId, slug, { query: "warm up", mode: "vector" });
  return performance.now() - started;
}

interface ScaleResult {
  latency: LatencyRow[];
  exact: ExactRow;
}

async function measureScale(
  bench: Bench,
  size: number,
  pool: VectorPool,
  context: BenchContext,
): Promise<ScaleResult> {
  const slug = `corpus-${size}`;
  const started = performance.now();
  const knowledgeBase = await buildCorpus(bench, slug, size, pool);
  const buildSeconds = (performance.now() - started) / 1000;
  context.log(`retrieval: ${formatCount(size)} chunks written in ${buildSeconds.toFixed(1)} s`);
  const indexLoadMs = await firstVectorSearchMs(bench, slug);
  // Fewer at 100k, where one search takes a good part of a second on a loaded machine.
  const queries = size >= 100_000 ? (context.quick ? 40 : 100) : context.quick ? 60 : 300;
  const latency: LatencyRow[] = [];
  for (const mode of MODES) latency.push(await timeSearches(bench, slug, mode, queries, size));
  const exact = await measureExactness(bench, knowledgeBase, pool, context.quick ? 20 : 50);
  return { latency, exact: { ...exact, buildSeconds, indexLoadMs } };
}

function render(ingested: IngestResult, poolSize: number, scales: ScaleResult[]): string {
  const ingestTable = markdownTable(
    ["documents", "pages (3,000 chars)", "MB", "chunks (512 tokens)", "seconds", "pages/s", "chunks/s"],
    [
      [
        ingested.documents,
        formatCount(ingested.pages),
        ingested.megabytes.toFixed(1),
        formatCount(ingested.chunks),
        ingested.seconds.toFixed(1),
        (ingested.pages / ingested.seconds).toFixed(1),
        formatCount(ingested.chunks / ingested.seconds),
      ],
    ],
  );
  const latencyTable = markdownTable(
    ["chunks", "mode", "queries", "p50 ms", "p99 ms", "mean ms"],
    scales.flatMap((scale) =>
      scale.latency.map((row) => [
        formatCount(row.chunks),
        row.mode,
        row.queries,
        formatMs(row.p50),
        formatMs(row.p99),
        formatMs(row.mean),
      ]),
    ),
  );
  const exactTable = markdownTable(
    [
      "chunks",
      "recall@10 vs brute force",
      "queries",
      "max score difference",
      "brute-force scan p50 ms",
      "first vector search (index load) ms",
      "vectors in memory MB",
      "corpus written in s",
    ],
    scales.map(({ exact }) => [
      formatCount(exact.chunks),
      exact.recall.toFixed(3),
      exact.queries,
      exact.maxScoreError.toExponential(1),
      formatMs(exact.bruteForceMs),
      formatMs(exact.indexLoadMs),
      ((exact.chunks * exact.dimensions * 4) / 1_048_576).toFixed(0),
      exact.buildSeconds.toFixed(1),
    ]),
  );
  return [
    "In process, on a SQLite file, through the real knowledge service (`createPromptrun`) with the keyless `dev:hash` embedding (256 dimensions); one query at a time, topK 10.",
    "",
    "**Ingest rate** (Markdown added through the service, extracted, chunked by tokens with overlap, embedded, written with its keyword index and vectors; timed from the first upload to the last document ready):",
    "",
    ingestTable,
    "",
    `**Search latency** at 10k and 100k chunks. The chunks are written through the store's ingestion port (addDocument → claimDocument → completeDocument, as the worker does) with dev:hash vectors: ${formatCount(poolSize)} real chunks of ingested Markdown (128-token chunks), then noisy neighbours of them; each query is three words of middling frequency. Hybrid is keyword and vector merged by reciprocal rank fusion (each list max(topK × 4, 50) long).`,
    "",
    latencyTable,
    "",
    "**Exactness.** Vector search scans every stored vector (no approximate index), so its recall is 1.0 by construction. Measured: the query is the text of a pool chunk (its dev:hash vector is known), the reference a brute-force scan of every stored vector; a hit counts when its exact score reaches the reference's 10th. The scores the search returned equal the reference's to the float32 rounding shown.",
    "",
    exactTable,
  ].join("\n");
}

function targets(scales: ScaleResult[]): TargetCheck[] {
  return scales.map(({ exact }) => ({
    target: `vector search exact at ${formatCount(exact.chunks)} chunks: recall@10 = 1.0 against brute force`,
    measured: exact.recall.toFixed(3),
    met: exact.recall === 1 && exact.maxScoreError < 1e-4,
  }));
}

export async function retrievalSection(context: BenchContext): Promise<SectionResult> {
  const directory = mkdtempSync(join(context.scratchDir, "retrieval-"));
  const bench = await openBench(directory);
  try {
    await createKnowledgeBase(bench, "ingest");
    const ingested = await ingest(bench, "ingest", context.quick ? 20 : 60, 10);
    context.log(
      `retrieval: ${formatCount(ingested.pages)} pages ingested in ${ingested.seconds.toFixed(1)} s`,
    );
    await createKnowledgeBase(bench, "pool", { maxTokens: 128, overlap: 16 });
    await ingest(bench, "pool", 12, 10);
    const pool = await vectorPool(bench, "pool");
    // The worker would claim the bench's hand-written documents: stop it (search needs no worker).
    await bench.promptrun.stop({ graceMs: 1_000 });
    const scales: ScaleResult[] = [];
    for (const size of [10_000, 100_000]) scales.push(await measureScale(bench, size, pool, context));
    return {
      title: RETRIEVAL_TITLE,
      body: render(ingested, pool.texts.length, scales),
      targets: targets(scales),
    };
  } finally {
    await bench.promptrun.stop();
    await bench.store.close();
    rmSync(directory, { recursive: true, force: true });
  }
}
