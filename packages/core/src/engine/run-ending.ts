/**
 * The one place a run ends: the final record (for webhooks), its outbox rows, the store's
 * compare-and-set end, the thread event and the run metric. The executor (completed or failed)
 * and cancellation (a run not executing here) both end runs through it.
 */
import type {
  Citation,
  Cost,
  CostBlock,
  FinishReason,
  RunMemory,
  RunRetrieval,
  TokenUsage,
} from "@promptrun/contract";
import type {
  Clock,
  MemoryMessage,
  RunRecord,
  RunStepRecord,
  Store,
  ThreadEventBus,
  WebhookDeliveryRecord,
} from "../ports.ts";
import { buildCost, sumCostBlocks, zeroCostBlock } from "../pricing/cost.ts";
import type { EngineMetrics } from "../services.ts";

export interface RunEndingDeps {
  store: Store;
  clock: Clock;
  events: ThreadEventBus;
  buildWebhookDeliveries?: ((run: RunRecord) => Promise<WebhookDeliveryRecord[]>) | undefined;
  metrics?: EngineMetrics | undefined;
  /** Told of every run this process ended (the winner of the end only): workflow steps advance their workflow. */
  onRunEnded?: ((run: RunRecord) => void) | undefined;
}

/** The error of a run failed by a cancel. */
export const CANCELLED = "cancelled";

/** UTF-8 bytes of a stored run error; a provider may send megabytes of error text. */
export const MAX_ERROR_MESSAGE_BYTES = 4_096;
const TRUNCATED = "…[truncated]";

/** Cuts a message to MAX_ERROR_MESSAGE_BYTES (marker included), never inside a character. */
export function truncateErrorMessage(message: string): string {
  if (Buffer.byteLength(message) <= MAX_ERROR_MESSAGE_BYTES) return message;
  const room = MAX_ERROR_MESSAGE_BYTES - Buffer.byteLength(TRUNCATED);
  // encodeInto stops before a character that does not fit whole; `read` is in UTF-16 units.
  const { read } = new TextEncoder().encodeInto(message, new Uint8Array(room));
  return message.slice(0, read) + TRUNCATED;
}

export interface CompletedEnding {
  output: string;
  /** The parsed output of a json_schema prompt, else null. */
  outputJson?: unknown;
  finishReason?: FinishReason | null;
  /** History the run carried and left out (absent: not read). */
  memoryWindow?: RunMemory | null;
  tokenUsage: TokenUsage;
  cost: Cost;
  /** The run's first attempt start. */
  startedAt: Date | null;
  attempts: number;
  /** What this exchange adds to the channel memory. */
  memory: MemoryMessage[];
  /** Metrics label of the run's model. */
  modelLabel: string;
  /** Every model call of the run (docs/TOOLS.md "Steps"). */
  steps: RunStepRecord[];
  /** Every knowledge-base search of the run (absent: what is stored stays). */
  retrieval?: RunRetrieval[];
  /** The output's [n] markers that cite retrieved chunks (absent: none). */
  citations?: Citation[];
}

export interface FailedEnding {
  /** Trimmed to MAX_ERROR_MESSAGE_BYTES here. */
  error: string;
  /** Of the last model call, when one finished (an answer that failed its schema). */
  finishReason?: FinishReason | null;
  /** History the run carried and left out, when it was read before the run failed. */
  memoryWindow?: RunMemory | null;
  /** Cost of the failed attempts (retries); none for a run that never reached a provider. */
  retryBlocks?: CostBlock[];
  startedAt?: Date | null;
  attempts?: number;
  /** Metrics label of the run's model; without one (a run cancelled before it executed) no metric. */
  modelLabel?: string;
  /** The run's steps when the executor knows them (absent: the stored ones stay). */
  steps?: RunStepRecord[];
  /** Fail only a run still paused at this step (an expired pause; see RunFailure.pausedStep). */
  pausedStep?: number;
  /** The cost when the caller computed it (every step and the failed attempts); else from retryBlocks. */
  cost?: Cost;
  /** The run's knowledge-base searches when the executor knows them (absent: the stored ones stay). */
  retrieval?: RunRetrieval[];
}

/** The run as its completion leaves it (what webhooks carry). */
function completedRecord(run: RunRecord, ending: CompletedEnding, finishedAt: Date): RunRecord {
  return {
    ...run,
    status: "completed",
    output: ending.output,
    outputJson: ending.outputJson ?? null,
    finishReason: ending.finishReason ?? null,
    memoryWindow: ending.memoryWindow ?? null,
    error: null,
    tokenUsage: ending.tokenUsage,
    cost: ending.cost,
    startedAt: ending.startedAt,
    finishedAt,
    attempts: ending.attempts,
    encryptedEnvVars: null,
    steps: ending.steps,
    pause: null,
    retrieval: ending.retrieval ?? run.retrieval,
    citations: ending.citations ?? [],
  };
}

/** Ends a run as completed. false: it had already ended (the store's compare-and-set lost). */
export async function endRunCompleted(
  deps: RunEndingDeps,
  run: RunRecord,
  ending: CompletedEnding,
): Promise<boolean> {
  const finishedAt = deps.clock.now();
  const finalRun = completedRecord(run, ending, finishedAt);
  const { output, tokenUsage, cost } = ending;
  const { outputJson, finishReason, memoryWindow } = finalRun;
  const deliveries = (await deps.buildWebhookDeliveries?.(finalRun)) ?? [];
  const ended = await deps.store.runs.complete(run.id, {
    output,
    outputJson,
    finishReason,
    memoryWindow,
    tokenUsage,
    cost,
    finishedAt,
    memory: ending.memory,
    deliveries,
    steps: ending.steps,
    ...(ending.retrieval ? { retrieval: ending.retrieval } : {}),
    citations: finalRun.citations,
  });
  if (!ended) return false;
  deps.events.publish(run.tenantId, run.threadId, {
    type: "run.completed",
    data: {
      runId: run.id,
      output,
      outputJson,
      finishReason,
      memory: memoryWindow,
      tokenUsage,
      cost,
      finishedAt: finishedAt.toISOString(),
    },
  });
  deps.metrics?.runFinished("completed", ending.modelLabel, finishedAt.getTime() - run.createdAt.getTime());
  deps.onRunEnded?.(finalRun);
  return true;
}

/** Ends a run as failed. false: it had already ended (the store's compare-and-set lost). */
export async function endRunFailed(
  deps: RunEndingDeps,
  run: RunRecord,
  ending: FailedEnding,
): Promise<boolean> {
  const error = truncateErrorMessage(ending.error);
  const finishedAt = deps.clock.now();
  const retryBlocks = ending.retryBlocks ?? [];
  const cost: Cost =
    ending.cost ??
    buildCost(
      zeroCostBlock(retryBlocks.every((block) => block.priced !== false)),
      sumCostBlocks(retryBlocks),
    );
  const finalRun: RunRecord = {
    ...run,
    status: "failed",
    error,
    output: null,
    outputJson: null,
    finishReason: ending.finishReason ?? null,
    memoryWindow: ending.memoryWindow ?? run.memoryWindow,
    tokenUsage: null,
    cost,
    startedAt: ending.startedAt ?? run.startedAt,
    finishedAt,
    attempts: ending.attempts ?? run.attempts,
    encryptedEnvVars: null,
    steps: ending.steps ?? run.steps,
    pause: null,
    retrieval: ending.retrieval ?? run.retrieval,
    citations: [],
  };
  const deliveries = (await deps.buildWebhookDeliveries?.(finalRun)) ?? [];
  const ended = await deps.store.runs.fail(run.id, {
    error,
    cost,
    finishedAt,
    deliveries,
    finishReason: ending.finishReason ?? null,
    memoryWindow: finalRun.memoryWindow,
    ...(ending.steps ? { steps: ending.steps } : {}),
    ...(ending.retrieval ? { retrieval: ending.retrieval } : {}),
    ...(ending.pausedStep !== undefined ? { pausedStep: ending.pausedStep } : {}),
  });
  if (!ended) return false;
  deps.events.publish(run.tenantId, run.threadId, {
    type: "run.failed",
    data: { runId: run.id, error, cost, finishedAt: finishedAt.toISOString() },
  });
  if (ending.modelLabel !== undefined) {
    deps.metrics?.runFinished("failed", ending.modelLabel, finishedAt.getTime() - run.createdAt.getTime());
  }
  deps.onRunEnded?.(finalRun);
  return true;
}
