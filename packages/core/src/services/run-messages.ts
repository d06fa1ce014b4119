import type { RunMessages } from "@promptrun/contract";
import type { PromptrunConfig } from "../config.ts";
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
  store: Pick<Store, "prompts" | "runs">;
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
    // {{retrieval}} as render shows it (the chunk texts are not read back here).
    const retrieval = retrievalPreview(definition.retrieval, run.inputs);
    const rendered = await renderRunRequest(definition, run.inputs, env, history, retrieval);
    return { messages: rendered.messages, memory: run.memoryWindow };
  };
}
