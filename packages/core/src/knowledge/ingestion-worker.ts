import type { PromptrunConfig } from "../config.ts";
import type { Clock } from "../ports.ts";
import { uuidv7 } from "../services/uuidv7.ts";
import { chunkInSlices } from "./chunk-in-slices.ts";
import {
  type Chunker,
  type ChunkRecord,
  type ClaimedDocument,
  type DocumentCost,
  type DocumentOutbox,
  EmbeddingError,
  type EmbeddingModelResolver,
  ExtractionError,
  type KnowledgeStore,
  type TextChunk,
  type TextExtractor,
} from "./ports.ts";
import { normalized } from "./search.ts";

/** docs/KNOWLEDGE.md "Ingestion": a claim holds the document this long unless renewed. */
export const INGEST_LEASE_MS = 30_000;
export const INGEST_RENEW_MS = 10_000;
export const INGEST_POLL_MS = 1_000;
export const INTERNAL_INGEST_ERROR = "internal error while ingesting";

export interface IngestionWorkerDependencies {
  store: KnowledgeStore;
  config: Pick<PromptrunConfig, "knowledge">;
  clock: Clock;
  extract: TextExtractor;
  chunk: Chunker;
  resolveEmbeddingModel: EmbeddingModelResolver;
  /** The tenant's document.ready/failed outbox builder (documentOutboxBuilder). */
  buildOutbox: (tenantId: string) => Promise<DocumentOutbox>;
  /** This instance's lease owner id (unique per process). */
  owner: string;
  /** Unexpected failures (the store down, a bug in a part); the document then fails with INTERNAL_INGEST_ERROR. */
  logError?: (message: string, error: unknown) => void;
  /** A document ended (its outbox rows are written): the webhook dispatcher sends now. */
  onEnded?: () => void;
  newId?: () => string;
  pollMs?: number;
  leaseMs?: number;
  renewMs?: number;
}

export interface IngestionWorker {
  start(): void;
  /** A document was added: claim now rather than at the next poll. */
  wake(): void;
  /** Stops claiming; waits for documents in flight up to `graceMs`, then abandons them to their lease. */
  stop(options?: { graceMs?: number }): Promise<void>;
  /** Documents this worker is ingesting now. */
  active(): number;
}

type Ending =
  | { status: "ready"; chunks: ChunkRecord[]; tokens: number; cost: DocumentCost }
  | { status: "failed"; error: string; cost: DocumentCost | null };

interface Job {
  controller: AbortController;
  renew?: ReturnType<typeof setInterval>;
  /** The lease is gone (renew said no): whatever this job computes is dropped. */
  lost: boolean;
}

/** Thrown inside a job whose lease was lost or that stop() abandoned: nothing is written. */
class Dropped extends Error {}

const addCost = (a: DocumentCost, b: DocumentCost): DocumentCost => ({
  total: a.total + b.total,
  priced: a.priced && b.priced,
});

/**
 * The background ingestion of documents (docs/KNOWLEDGE.md "Ingestion"): claims pending documents
 * (or ones whose lease expired: their instance died) from the store's durable queue, extracts,
 * chunks and embeds them, and writes every chunk with the status in one completeDocument, which
 * only succeeds while this worker still holds the lease: a crash means a fresh re-ingest by
 * another instance, never a duplicate chunk.
 */
export function createIngestionWorker(dependencies: IngestionWorkerDependencies): IngestionWorker {
  const { store, config, clock, owner } = dependencies;
  const newId = dependencies.newId ?? (() => uuidv7());
  const leaseMs = dependencies.leaseMs ?? INGEST_LEASE_MS;
  const renewMs = dependencies.renewMs ?? INGEST_RENEW_MS;
  const pollMs = dependencies.pollMs ?? INGEST_POLL_MS;
  const logError = dependencies.logError ?? (() => {});
  const jobs = new Map<Job, Promise<void>>();
  let state: "idle" | "running" | "stopping" = "idle";
  let abandoned = false;
  let poll: ReturnType<typeof setInterval> | undefined;
  let filling = false;
  let fillAgain = false;

  const leaseUntil = () => new Date(clock.now().getTime() + leaseMs);
  const ingest = createIngestSteps(dependencies, newId);

  const finish = async (claimed: ClaimedDocument, ending: Ending) => {
    const { document } = claimed;
    const outbox = await dependencies.buildOutbox(document.tenantId);
    const at = clock.now();
    const written =
      ending.status === "ready"
        ? await store.completeDocument(document.id, owner, { ...ending, readyAt: at, outbox })
        : await store.failDocument(document.id, owner, {
            error: ending.error,
            cost: ending.cost,
            at,
            outbox,
          });
    // null: deleted, replaced or taken over meanwhile; the result is dropped.
    if (written) dependencies.onEnded?.();
  };

  const runJob = async (job: Job, claimed: ClaimedDocument) => {
    job.renew = setInterval(() => {
      store.renewDocumentLease(claimed.document.id, owner, leaseUntil()).then(
        (held) => {
          if (!held) {
            job.lost = true;
            job.controller.abort();
          }
        },
        (error) => logError(`renewing the lease of document ${claimed.document.id} failed`, error),
      );
    }, renewMs);
    try {
      const ending = await ingest(claimed, job.controller.signal, () => job.lost || abandoned);
      if (job.lost || abandoned) return;
      await finish(claimed, ending);
    } catch (error) {
      if (!(error instanceof Dropped) && !abandoned) {
        logError(`ingesting document ${claimed.document.id} failed`, error);
      }
    } finally {
      clearInterval(job.renew);
      jobs.delete(job);
      if (state === "running") void fill();
    }
  };

  const fill = async (): Promise<void> => {
    if (filling) {
      fillAgain = true;
      return;
    }
    filling = true;
    try {
      do {
        fillAgain = false;
        while (state === "running" && jobs.size < config.knowledge.ingestConcurrency) {
          const claimed = await store.claimDocument(owner, leaseUntil(), clock.now());
          if (!claimed) break;
          const job: Job = { controller: new AbortController(), lost: false };
          jobs.set(job, runJob(job, claimed));
        }
      } while (fillAgain && state === "running");
    } catch (error) {
      logError("claiming a document to ingest failed", error);
    } finally {
      filling = false;
    }
  };

  return {
    start() {
      if (state !== "idle") return;
      state = "running";
      poll = setInterval(() => void fill(), pollMs);
      void fill();
    },
    wake() {
      if (state === "running") void fill();
    },
    async stop(options) {
      if (state === "stopping") return;
      state = "stopping";
      clearInterval(poll);
      const graceMs = options?.graceMs ?? 10_000;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      });
      await Promise.race([Promise.allSettled(jobs.values()), grace]);
      clearTimeout(timer);
      if (jobs.size > 0) {
        // Their leases expire and another instance ingests them from scratch.
        abandoned = true;
        for (const job of jobs.keys()) {
          clearInterval(job.renew);
          job.controller.abort();
        }
      }
    },
    active: () => jobs.size,
  };
}

/** extract → chunk → embed in batches; an ExtractionError/EmbeddingError ends the document failed with its message. */
function createIngestSteps(dependencies: IngestionWorkerDependencies, newId: () => string) {
  const { config, logError = () => {} } = dependencies;
  const { maxIngestAttempts, maxExtractedChars } = config.knowledge;

  /** `spent.cost`: what the embedding calls made so far cost (recorded on a failure too). */
  const embedAll = async (
    claimed: ClaimedDocument,
    chunks: TextChunk[],
    signal: AbortSignal,
    dropped: () => boolean,
    spent: { cost: DocumentCost | null },
  ) => {
    const model = dependencies.resolveEmbeddingModel(claimed.knowledgeBase.embeddingModel);
    const batchSize = Math.max(1, config.knowledge.embeddingBatchSize);
    const vectors: Float32Array[] = [];
    let cost: DocumentCost = { total: 0, priced: true };
    for (let start = 0; start < chunks.length; start += batchSize) {
      if (dropped()) throw new Dropped();
      const texts = chunks.slice(start, start + batchSize).map((chunk) => chunk.text);
      const result = await model.embed(texts, { signal });
      cost = addCost(cost, result.cost);
      spent.cost = cost;
      if (result.vectors.length !== texts.length) {
        throw new EmbeddingError(
          `${model.ref} returned ${result.vectors.length} vectors for ${texts.length} texts`,
        );
      }
      vectors.push(...result.vectors.map(normalized));
    }
    return { vectors, cost };
  };

  const steps = async (
    claimed: ClaimedDocument,
    signal: AbortSignal,
    dropped: () => boolean,
    spent: { cost: DocumentCost | null },
  ): Promise<Ending> => {
    const { document, knowledgeBase } = claimed;
    const extracted = await dependencies.extract(claimed.content, document.mediaType);
    if (extracted.text.length > maxExtractedChars) {
      throw new ExtractionError(
        `the document's text is ${extracted.text.length} characters, more than the limit of ${maxExtractedChars}; split it into smaller documents`,
      );
    }
    if (extracted.text.trim() === "") {
      throw new ExtractionError(
        "the document has no text to index (a scanned PDF holds only images: run OCR on it first)",
      );
    }
    if (dropped()) throw new Dropped();
    const chunks = await chunkInSlices(dependencies.chunk, extracted.text, knowledgeBase.chunking);
    const { vectors, cost } = await embedAll(claimed, chunks, signal, dropped, spent);
    const records = chunks.map((chunk, ordinal) => ({
      id: newId(),
      documentId: document.id,
      ordinal,
      text: chunk.text,
      tokens: chunk.tokens,
      embedding: vectors[ordinal] as Float32Array,
    }));
    const tokens = chunks.reduce((sum, chunk) => sum + chunk.tokens, 0);
    return { status: "ready", chunks: records, tokens, cost };
  };

  return async (claimed: ClaimedDocument, signal: AbortSignal, dropped: () => boolean): Promise<Ending> => {
    const { attempts } = claimed.document;
    if (attempts > maxIngestAttempts) {
      const interrupted = attempts - 1;
      return {
        status: "failed",
        error: `ingestion was interrupted ${interrupted} times (the instance stopped or crashed while ingesting it); upload it again to retry`,
        cost: null,
      };
    }
    const spent: { cost: DocumentCost | null } = { cost: null };
    try {
      return await steps(claimed, signal, dropped, spent);
    } catch (error) {
      if (error instanceof Dropped || dropped()) throw new Dropped();
      if (error instanceof ExtractionError || error instanceof EmbeddingError) {
        return { status: "failed", error: error.message, cost: spent.cost };
      }
      logError(`ingesting document ${claimed.document.id} failed`, error);
      return { status: "failed", error: INTERNAL_INGEST_ERROR, cost: spent.cost };
    }
  };
}
