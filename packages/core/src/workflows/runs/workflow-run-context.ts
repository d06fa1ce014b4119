/**
 * What the workflow run service and its advancer share: their dependencies, the compiled graphs
 * and pinned prompt versions (immutable, so cached by id), the step runs of a run, and the end's
 * webhook rows.
 */
import type { PromptrunConfig } from "../../config.ts";
import type { RunEngine } from "../../engine-port.ts";
import type { KnowledgeSearch } from "../../knowledge/ports.ts";
import type { Clock, PromptVersionRecord, RunRecord, Store, ThreadEventBus } from "../../ports.ts";
import type { SecretBox } from "../../security/secret-box.ts";
import type { PendingRunCounter } from "../../services/pending-run-counter.ts";
import type { RateLimitService } from "../../services.ts";
import { buildWorkflowDeliveries } from "../../webhooks/build-workflow-deliveries.ts";
import { type CompiledWorkflow, compileWorkflow } from "../graph.ts";
import type { WorkflowRunRecord } from "../ports.ts";
import type { StepRuns } from "./step-context.ts";
import { toWorkflowRun } from "./to-workflow-run.ts";

export interface WorkflowRunsDeps {
  store: Store;
  config: Pick<
    PromptrunConfig,
    "idempotencyTtlSeconds" | "secret" | "previousSecrets" | "allowPrivateUrls" | "maxPendingRunsPerTenant"
  >;
  clock: Clock;
  engine: RunEngine;
  events: ThreadEventBus;
  secrets: SecretBox;
  rateLimits: RateLimitService;
  /** The per-tenant pending cap, shared with prompt runs (docs/WORKFLOWS.md "Runs"). */
  pendingRuns: PendingRunCounter;
  /** Retrieve steps search through it; absent: they fail. */
  knowledge?: KnowledgeSearch | undefined;
  /** New webhook outbox rows were written (a workflow ended): the dispatcher polls now. */
  wakeDispatcher?: (() => void) | undefined;
  logError?: ((message: string, error: unknown) => void) | undefined;
  newId: () => string;
}

const MAX_CACHED = 1_000;

/** A bounded cache of immutable records by id (cleared whole when full). */
function cacheOf<T>() {
  const entries = new Map<string, T>();
  return async (id: string, load: () => Promise<T | null>): Promise<T | null> => {
    const cached = entries.get(id);
    if (cached !== undefined) return cached;
    const loaded = await load();
    if (loaded === null) return null;
    if (entries.size >= MAX_CACHED) entries.clear();
    entries.set(id, loaded);
    return loaded;
  };
}

export type WorkflowRunContext = ReturnType<typeof createWorkflowRunContext>;

export function createWorkflowRunContext(deps: WorkflowRunsDeps) {
  const { store } = deps;
  const graphs = cacheOf<CompiledWorkflow>();
  const promptVersions = cacheOf<PromptVersionRecord>();

  /** The compiled graph of the run's workflow version (null: the version is gone). */
  const graphOf = (run: WorkflowRunRecord) =>
    graphs(run.workflowVersionId, async () => {
      const version = await store.workflows.resolveVersion(run.tenantId, run.workflowSlug, {
        kind: "id",
        id: run.workflowVersionId,
      });
      return version ? compileWorkflow(version.definition) : null;
    });

  const promptVersionOf = (tenantId: string, slug: string, id: string) =>
    promptVersions(id, () => store.prompts.resolveVersion(tenantId, slug, { kind: "id", id }));

  /** The runs of the run's started prompt steps, by id. */
  const stepRunsOf = async (run: WorkflowRunRecord): Promise<Map<string, RunRecord>> => {
    const ids = run.steps.flatMap((step) => (step.runId === null ? [] : [step.runId]));
    const runs = await Promise.all(ids.map((id) => store.runs.getById(id)));
    return new Map(runs.flatMap((stepRun) => (stepRun ? [[stepRun.id, stepRun] as const] : [])));
  };

  /** The webhook rows of a run's end, its data the run as the API shows it. */
  const endDeliveries = (run: WorkflowRunRecord, graph: CompiledWorkflow | null, stepRuns: StepRuns) =>
    buildWorkflowDeliveries(
      { store, clock: deps.clock, newId: deps.newId },
      { ...toWorkflowRun(run, graph, stepRuns), tenantId: run.tenantId },
    );

  const logError = (message: string, error: unknown) => deps.logError?.(message, error);

  return { deps, graphOf, promptVersionOf, stepRunsOf, endDeliveries, logError };
}
