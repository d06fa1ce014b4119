/**
 * A run's knowledge-base searches (docs/KNOWLEDGE.md "In prompts"): its prompt's `retrieval:`
 * before the first model call and its knowledge_base tool calls. Chunks are numbered from 1 across
 * the run (a tool search continues after the earlier ones), their texts kept for `{{retrieval}}`,
 * tool outputs and citation quotes; a run continuing after a pause or a restart re-reads them.
 */
import {
  type Cost,
  type CostBlock,
  DEFAULT_SEARCH_TOP_K,
  type ParsedSearchRequest,
  type RetrievalSpec,
  type RunRetrieval,
  SEARCH_QUERY_MAX_BYTES,
} from "@promptrun/contract";
import { PromptrunError } from "../errors.ts";
import type { ChunkView, KnowledgeSearch, KnowledgeStore } from "../knowledge/ports.ts";
import { buildCost, sumCostBlocks, zeroCostBlock } from "../pricing/cost.ts";
import { renderTemplate } from "../templating/template.ts";

/** What `{{retrieval}}` and a tool search give when nothing matched. */
export const NO_RESULTS = "(no results)";

/** A chunk whose document was deleted or replaced since it was retrieved (a continuing run). */
const GONE = "(this chunk no longer exists)";

/** `[n] <filename>: <text>`, separated by blank lines. */
export function numberedChunks(chunks: ReadonlyArray<{ n: number; filename: string; text: string }>): string {
  if (chunks.length === 0) return NO_RESULTS;
  return chunks.map((chunk) => `[${chunk.n}] ${chunk.filename}: ${chunk.text}`).join("\n\n");
}

/** A retrieval's chunks as `{{retrieval}}` showed them, from their texts (a missing one reads as gone). */
export function numberedRetrieval(
  entry: RunRetrieval,
  textOf: (chunkId: string) => string | undefined,
): string {
  return numberedChunks(entry.chunks.map((chunk) => ({ ...chunk, text: textOf(chunk.chunkId) ?? GONE })));
}

/**
 * KnowledgeSearch.chunks over the store: the chunks of these ids that still exist in the tenant's
 * knowledge base `slug` ([] for a slug the tenant does not have).
 */
export async function storedChunks(
  store: Pick<KnowledgeStore, "getKnowledgeBase" | "getChunks">,
  tenantId: string,
  slug: string,
  chunkIds: string[],
): Promise<ChunkView[]> {
  if (chunkIds.length === 0) return [];
  const knowledgeBase = await store.getKnowledgeBase(tenantId, slug);
  return knowledgeBase ? store.getChunks(knowledgeBase.id, chunkIds) : [];
}

/** Cut to SEARCH_QUERY_MAX_BYTES of UTF-8, never inside a character. */
function cutQuery(query: string): string {
  if (Buffer.byteLength(query) <= SEARCH_QUERY_MAX_BYTES) return query;
  const { read } = new TextEncoder().encodeInto(query, new Uint8Array(SEARCH_QUERY_MAX_BYTES));
  return query.slice(0, read);
}

/** A search's query-embedding cost as a cost block (all of it input). */
const costBlockOf = (cost: { total: number; priced: boolean }): CostBlock => ({
  ...zeroCostBlock(cost.priced),
  input: cost.total,
  total: cost.total,
});

/** `cost` with `block` added to its success part (the totals follow; unpriced if either is). */
export const withSuccessCost = (cost: Cost, block: CostBlock | null): Cost =>
  block === null ? cost : buildCost(sumCostBlocks([cost.success, block]), cost.retries);

/** The search of a run could not be made: the run fails with this message (not retried). */
export class RetrievalError extends PromptrunError {}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The searches of one run, with the texts of the chunks they found. */
export class RunKnowledge {
  private readonly entries: RunRetrieval[];
  private readonly texts = new Map<string, string>();
  /** Query-embedding cost of searches not yet charged to a step (see takeCost). */
  private pendingCost: CostBlock | null = null;

  private constructor(
    private readonly knowledge: KnowledgeSearch | undefined,
    private readonly tenantId: string,
    stored: readonly RunRetrieval[],
  ) {
    this.entries = stored.map((entry) => ({ ...entry, chunks: [...entry.chunks] }));
  }

  /** The run's searches so far, with their chunk texts re-read (a run continuing after a pause or restart). */
  static async open(
    knowledge: KnowledgeSearch | undefined,
    tenantId: string,
    stored: readonly RunRetrieval[],
  ): Promise<RunKnowledge> {
    const run = new RunKnowledge(knowledge, tenantId, stored);
    await run.rereadTexts();
    return run;
  }

  private async rereadTexts(): Promise<void> {
    if (!this.knowledge || this.entries.length === 0) return;
    const idsBySlug = new Map<string, string[]>();
    for (const entry of this.entries) {
      const ids = idsBySlug.get(entry.knowledgeBase) ?? [];
      ids.push(...entry.chunks.map((chunk) => chunk.chunkId));
      idsBySlug.set(entry.knowledgeBase, ids);
    }
    const knowledge = this.knowledge;
    const reads = [...idsBySlug].map(([slug, ids]) => knowledge.chunks(this.tenantId, slug, ids));
    for (const chunks of await Promise.all(reads))
      for (const chunk of chunks) this.texts.set(chunk.chunkId, chunk.text);
  }

  /** Every search of the run, in order (what the run record stores). */
  get retrieval(): RunRetrieval[] {
    return this.entries.map((entry) => ({ ...entry, chunks: [...entry.chunks] }));
  }

  /** The retrieved text of a chunk; undefined when it no longer exists. */
  textOf(chunkId: string): string | undefined {
    return this.texts.get(chunkId);
  }

  /** One search's chunks as the model reads them (`{{retrieval}}`, a tool's output). */
  numbered(entry: RunRetrieval): string {
    return numberedRetrieval(entry, (chunkId) => this.texts.get(chunkId));
  }

  /** The query-embedding cost not yet charged to a step, and forgets it. */
  takeCost(): CostBlock | null {
    const cost = this.pendingCost;
    this.pendingCost = null;
    return cost;
  }

  /**
   * Searches `slug` and records it; chunks numbered after every earlier one of the run. Throws
   * RetrievalError: "knowledge base 'x' not found" (unknown to the tenant), or the search's failure.
   */
  async search(
    slug: string,
    request: Omit<ParsedSearchRequest, "query"> & { query: string },
  ): Promise<RunRetrieval> {
    const query = cutQuery(request.query.trim());
    // An empty query (an optional input left out) searches nothing: no chunks.
    if (query === "") return this.record({ knowledgeBase: slug, query, chunks: [] });
    if (!this.knowledge)
      throw new RetrievalError(
        "internal",
        "knowledge bases are not available: the engine has no knowledge search",
      );
    let outcome: Awaited<ReturnType<KnowledgeSearch["search"]>>;
    try {
      outcome = await this.knowledge.search(this.tenantId, slug, { ...request, query });
    } catch (error) {
      if (PromptrunError.isInstance(error) && error.code === "not_found")
        throw new RetrievalError("not_found", `knowledge base '${slug}' not found`);
      throw new RetrievalError("internal", `search of knowledge base '${slug}' failed: ${messageOf(error)}`);
    }
    this.pendingCost = sumCostBlocks([
      ...(this.pendingCost ? [this.pendingCost] : []),
      costBlockOf(outcome.cost),
    ]);
    // Numbered now, after the await: parallel tool searches never share a number.
    let n = this.entries.reduce((sum, entry) => sum + entry.chunks.length, 0);
    const chunks = outcome.hits.map((hit) => {
      this.texts.set(hit.chunkId, hit.text);
      return {
        n: ++n,
        chunkId: hit.chunkId,
        documentId: hit.documentId,
        filename: hit.filename,
        score: hit.score,
      };
    });
    return this.record({ knowledgeBase: slug, query, chunks });
  }

  private record(entry: RunRetrieval): RunRetrieval {
    this.entries.push(entry);
    return entry;
  }
}

/** The prompt's `retrieval:` as a search request: its query rendered with the run's inputs. */
export function retrievalRequestOf(
  spec: RetrievalSpec,
  inputs: Record<string, unknown>,
): Omit<ParsedSearchRequest, "query"> & { query: string } {
  return {
    // The query names declared inputs only (push-time check): no env var reaches a search.
    query: renderTemplate(spec.query, inputs, {}),
    topK: spec.topK ?? DEFAULT_SEARCH_TOP_K,
    mode: spec.mode ?? "hybrid",
    ...(spec.filter ? { filter: spec.filter } : {}),
  };
}
