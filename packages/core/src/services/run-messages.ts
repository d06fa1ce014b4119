import type { PromptDefinition, RunMessages } from "@promptrun/contract";
import type { PromptrunConfig } from "../config.ts";
import { numberedRetrieval, storedChunks } from "../engine/retrieval.ts";
import { notFound } from "../errors.ts";
import type { RunRecord, Store } from "../ports.ts";
import {
  type CarriedMemory,
  type MemorySource,
  maskedEnv,
  renderRunRequest,
  retrievalPreview,
} from "../rendering/run-request.ts";
import { templateVariables } from "../templating/template.ts";

export interface RunMessagesDependencies {
  store: Pick<Store, "prompts" | "runs" | "knowledge">;
  config: Pick<PromptrunConfig, "memory">;
  /** The tenant's run, or not_found (malformed ids and other tenants' runs alike). */
  requireRun(tenantId: string, id: string): Promise<RunRecord>;
}

export type ReadRunMessages = (tenantId: string, id: string) => Promise<RunMessages>;

/**
 * The history to render with: the messages the run carried (`memoryWindow.messages` of them,
 * read back from before its exchange); for a pending run (the window is recorded when a run ends),
 * what it would carry now, read as render reads it; none for a run that ended without recording it.
 */
async function historyOf(
  { store, config }: Pick<RunMessagesDependencies, "store" | "config">,
  run: RunRecord,
): Promise<MemorySource | CarriedMemory | null> {
  const window = run.memoryWindow;
  if (window !== null) {
    const messages = window.messages === 0 ? [] : await store.runs.messagesBeforeRun(run, window.messages);
    return { carried: { messages, dropped: window.dropped } };
  }
  if (run.status === "pending") return { runs: store.runs, bound: config.memory, channel: run };
  return null;
}

/**
 * What `{{retrieval}}` was for the run: its stored first search with the chunk texts read again
 * (a chunk deleted since reads as gone); before its search, what render shows.
 */
async function retrievalOf(
  store: Pick<Store, "knowledge">,
  run: RunRecord,
  definition: PromptDefinition,
): Promise<string | undefined> {
  const first = run.retrieval?.[0];
  if (!definition.retrieval || !first) return retrievalPreview(definition.retrieval, run.inputs);
  const ids = first.chunks.map((chunk) => chunk.chunkId);
  const chunks = await storedChunks(store.knowledge, run.tenantId, first.knowledgeBase, ids);
  const texts = new Map(chunks.map((chunk) => [chunk.chunkId, chunk.text]));
  return numberedRetrieval(first, (chunkId) => texts.get(chunkId));
}

/**
 * The messages of a run's first model call (docs/PRODUCT-RULES.md "Run messages"): its version
 * rendered again by the engine's renderRunRequest from the stored inputs, with the history it
 * carried. Env var values are never read: every `{{env.NAME}}` the prompt uses shows as
 * `[env:NAME]` (a run that reached its model had each of them set, so this is what render shows).
 */
export function createRunMessages(dependencies: RunMessagesDependencies): ReadRunMessages {
  const { store, requireRun } = dependencies;
  return async (tenantId, id) => {
    const run = await requireRun(tenantId, id);
    const version = await store.prompts.resolveVersion(tenantId, run.promptSlug, {
      kind: "id",
      id: run.promptVersionId,
    });
    if (!version) throw notFound(`prompt ${run.promptSlug} version ${run.promptVersion} no longer exists`);
    const { definition } = version;
    const env = maskedEnv(templateVariables(definition.messages).env);
    const history = await historyOf(dependencies, run);
    const retrieval = await retrievalOf(store, run, definition);
    const rendered = await renderRunRequest(definition, run.inputs, env, history, retrieval);
    return { messages: rendered.messages, memory: run.memoryWindow };
  };
}
