/**
 * Executes one run to its end, or to a pause for the caller's tool outputs (docs/TOOLS.md "The
 * loop"): model call (model-step.ts), then its tool calls (tool-step.ts), then the next model
 * call, each step stored before its tools run, so a restart continues from the last stored step
 * and never sends a finished step to the model again.
 */
import {
  type CostBlock,
  DEFAULT_MAX_STEPS,
  DEFAULT_TOOL_TIMEOUT_SECONDS,
  MAX_TOOL_CALLS_PER_STEP,
  type RequiredAction,
  type RunRetrieval,
  type ToolCall,
} from "@promptrun/contract";
import type { PromptrunConfig } from "../config.ts";
import { PromptrunError } from "../errors.ts";
import type { KnowledgeSearch } from "../knowledge/ports.ts";
import type { ModelGateway } from "../models/model-gateway.ts";
import { outputJsonOf } from "../models/output-json.ts";
import type {
  Clock,
  RunPause,
  RunRecord,
  RunStepRecord,
  Store,
  ThreadEventBus,
  WebhookDeliveryRecord,
} from "../ports.ts";
import { buildCost, sumCostBlocks } from "../pricing/cost.ts";
import { metricsModelLabel } from "../pricing/metrics-model-label.ts";
import type { SecretBox } from "../security/secret-box.ts";
import type { EngineMetrics } from "../services.ts";
import { openRunTools, type RunTools, type ToolKnowledge } from "../tools/index.ts";
import { citationsOf } from "./citations.ts";
import { runModelStep, type StepContext } from "./model-step.ts";
import { type PreparedRun, prepare, startErrorOf } from "./prepared-run.ts";
import { type RunKnowledge, withSuccessCost } from "./retrieval.ts";
import { CANCELLED, endRunCompleted, endRunFailed } from "./run-ending.ts";
import { RunInterruption } from "./run-interruption.ts";
import {
  attemptsOf,
  runCostOf,
  stepMemoryRows,
  stepMessages,
  sumUsage,
  tokensOf,
  unansweredCalls,
  withLastStep,
  withResults,
} from "./run-steps.ts";
import { checkToolCalls, clientCallsOf, runServerCalls, serverCallsOf } from "./tool-step.ts";

export interface RunExecutorDeps {
  store: Store;
  config: PromptrunConfig;
  clock: Clock;
  events: ThreadEventBus;
  secrets: SecretBox;
  models: ModelGateway;
  buildWebhookDeliveries?: ((run: RunRecord) => Promise<WebhookDeliveryRecord[]>) | undefined;
  metrics?: EngineMetrics | undefined;
  /** Jitter source (tests pin it). */
  random: () => number;
  /** Transport for http and mcp tools (tests); the private-range guard applies on top. */
  toolFetch?: typeof fetch | undefined;
  /** Knowledge-base search (prompts with `retrieval:`, knowledge_base tools); absent: such runs fail. */
  knowledge?: KnowledgeSearch | undefined;
  /** See RunEndingDeps.onRunEnded. */
  onRunEnded?: ((run: RunRecord) => void) | undefined;
}

/**
 * completed / failed: this execution ended the run (the store accepted it).
 * already-ended: the store said the run had ended elsewhere (CAS lost).
 * interrupted: stopped for shutdown; the run stays pending and resumes on the next start.
 * paused: the run waits for the caller's tool outputs (stored); it holds no slot meanwhile.
 */
export type ExecutionOutcome =
  | { kind: "completed" }
  | { kind: "failed"; cancelled: boolean }
  | { kind: "already-ended" }
  | { kind: "interrupted" }
  | { kind: "paused" };

/** Attempts a step resumed after restarts may take past config.run.maxAttempts (interruptions are not its fault). */
const RESUMES_BEYOND_ATTEMPT_LIMIT = 10;

/** Runs one run to its end, a pause, or until shutdown interrupts it. Never throws for run-level failures. */
export async function executeRun(
  deps: RunExecutorDeps,
  run: RunRecord,
  envVars: Record<string, string> | undefined,
  signal: AbortSignal,
): Promise<ExecutionOutcome> {
  const execution = new RunExecution(deps, run, signal);
  const preparation = await prepare(deps, run, envVars).then(
    (prepared) => ({ prepared }),
    (error: unknown) => ({ error }),
  );
  if ("error" in preparation) return execution.failToStart(preparation.error);
  const { prepared } = preparation;
  execution.prepared(prepared);
  if (prepared.freshRetrieval && !(await execution.storeRetrieval(prepared.freshRetrieval)))
    return { kind: "already-ended" };
  const tools = await execution.openTools(prepared);
  if (tools === "failed") return execution.lastOutcome;
  try {
    return await execution.loop(prepared, tools);
  } finally {
    await tools?.close().catch(() => {});
  }
}

/** The state of one execution of a run: its steps so far, its attempts, and how it ends. */
class RunExecution {
  private startedAt: Date | null;
  private modelLabel = "unknown";
  private steps: RunStepRecord[];
  private attempts: number;
  private memoryWindow: PreparedRun["memoryWindow"] | null = null;
  private knowledge: RunKnowledge | null = null;
  /** run.retrieval events held until the run's run.started (sent before any run.token). */
  private unannounced: RunRetrieval[] = [];
  lastOutcome: ExecutionOutcome = { kind: "already-ended" };

  constructor(
    private readonly deps: RunExecutorDeps,
    private readonly run: RunRecord,
    private readonly signal: AbortSignal,
  ) {
    this.startedAt = run.startedAt;
    this.steps = [...run.steps];
    this.attempts = run.attempts;
  }

  prepared(prepared: PreparedRun): void {
    this.modelLabel = metricsModelLabel(prepared.definition.model, this.deps.config.priceOverrides);
    this.memoryWindow = prepared.memoryWindow;
    this.knowledge = prepared.knowledge;
    // A run taken again from its start after a restart: its stored retrieval goes out again with
    // the new run.started (clients drop what they had of the run then).
    const stored = prepared.knowledge.retrieval[0];
    if (prepared.definition.retrieval && !prepared.freshRetrieval && stored && this.steps.length === 0)
      this.unannounced.push(stored);
  }

  /** Stores the prompt's retrieval before the first model call (a restart reuses it); announced with run.started. */
  async storeRetrieval(retrieval: RunRetrieval): Promise<boolean> {
    this.unannounced.push(retrieval);
    return this.saveSteps(this.steps);
  }

  failToStart(error: unknown): Promise<ExecutionOutcome> | ExecutionOutcome {
    return this.signal.aborted ? this.whenAborted([]) : this.endFailed(startErrorOf(error), []);
  }

  /** The prompt's tools, mcp servers listed (once per execution); none when it has no tools. */
  async openTools(prepared: PreparedRun): Promise<RunTools | null | "failed"> {
    const declared = prepared.definition.tools;
    if (!declared || declared.length === 0) return null;
    const { config } = this.deps;
    try {
      return await openRunTools(declared, {
        inputs: this.run.inputs,
        env: prepared.tenantEnv,
        allowPrivateUrls: config.allowPrivateUrls,
        timeoutMs: config.tools.timeoutMs,
        maxResponseBytes: config.tools.maxResponseBytes,
        ...(this.deps.toolFetch ? { fetch: this.deps.toolFetch } : {}),
        signal: this.signal,
        knowledge: this.toolKnowledge(),
      });
    } catch (error) {
      this.lastOutcome = await (this.signal.aborted
        ? this.whenAborted([])
        : this.endFailed(PromptrunError.isInstance(error) ? error.message : startErrorOf(error), []));
      return "failed";
    }
  }

  // long-function: one turn of the loop per branch (tools to run, a pause, a model call), kept together to read as the loop it is.
  async loop(prepared: PreparedRun, tools: RunTools | null): Promise<ExecutionOutcome> {
    const { config } = this.deps;
    const maxSteps = prepared.definition.maxSteps ?? DEFAULT_MAX_STEPS;
    // Attempts of a step interrupted by a restart (made before this execution, not in a stored step).
    const interruptedAttempts = Math.max(0, this.attempts - attemptsOf(this.steps));
    if (interruptedAttempts >= config.run.maxAttempts + RESUMES_BEYOND_ATTEMPT_LIMIT) {
      const error = `run was interrupted ${interruptedAttempts} times (server restarts); giving up`;
      return this.endFailed(error, []);
    }
    let announce = this.steps.length === 0 || interruptedAttempts > 0;
    let lastAllowedAttempt = Math.max(config.run.maxAttempts, interruptedAttempts + 1);

    for (;;) {
      if (this.signal.aborted) return this.whenAborted([]);
      const last = this.steps.at(-1);
      if (last && last.toolCalls.length === 0) return this.complete(prepared, last);
      if (last && unansweredCalls(last).length > 0) {
        const server = tools ? serverCallsOf(last, tools) : [];
        if (server.length > 0 && tools) {
          const results = await runServerCalls(server, tools, this.signal);
          if (this.signal.aborted) return this.whenAborted([]);
          // The step that called the tools is charged their searches' query embeddings.
          const answered = this.charged(withResults(last, results));
          if (!(await this.saveSteps(withLastStep(this.steps, answered)))) return { kind: "already-ended" };
          for (const result of results) this.publishToolResult(last.index, result);
          continue;
        }
        const client = clientCallsOf(last, tools);
        if (client.length > 0) return this.pause(prepared, last, client);
      }
      if (this.steps.length >= maxSteps) return this.endFailed(`max steps (${maxSteps}) reached`, []);

      // Held retrieval events go out with run.started; a step that sends none sends them now.
      if (!announce) this.announceRetrieval();
      const outcome = await runModelStep(this.stepContext(prepared), {
        index: this.steps.length,
        messages: [...prepared.messages, ...stepMessages(this.steps)],
        tools: tools?.offered,
        tokenBase: tokensOf(this.steps),
        attemptsBefore: this.attempts,
        stepBase: attemptsOf(this.steps),
        lastAllowedAttempt,
        announceFirstAttempt: announce,
      });
      announce = false;
      lastAllowedAttempt = config.run.maxAttempts;
      if (outcome.kind === "interrupted") return { kind: "interrupted" };
      if (outcome.kind === "cancelled") {
        this.attempts = outcome.attempts;
        return this.endFailed(CANCELLED, outcome.retryBlocks, { cancelled: true });
      }
      if (outcome.kind === "failed") {
        this.attempts = outcome.attempts;
        return this.endFailed(outcome.error, outcome.retryBlocks);
      }
      this.attempts = outcome.attempts;
      // The first step is charged the prompt retrieval's query embedding.
      const answered = this.charged(outcome.step);
      if (outcome.kind === "refused") {
        this.steps = [...this.steps, answered];
        return this.endFailed(outcome.error, [], { finishReason: answered.finishReason });
      }
      if (outcome.requested.length === 0) return this.complete(prepared, answered, outcome.outputJson);
      if (outcome.requested.length > MAX_TOOL_CALLS_PER_STEP) {
        this.steps = [...this.steps, answered];
        const error = `the model asked for ${outcome.requested.length} tool calls in one step; at most ${MAX_TOOL_CALLS_PER_STEP} are allowed`;
        return this.endFailed(error, [], { finishReason: answered.finishReason });
      }
      const { calls, refused } = checkToolCalls(outcome.requested, tools);
      const step: RunStepRecord = { ...answered, toolCalls: calls, toolResults: refused };
      if (this.steps.length + 1 >= maxSteps) {
        // The last allowed call asked for more tools: no answer can come any more.
        this.steps = [...this.steps, step];
        return this.endFailed(`max steps (${maxSteps}) reached`, [], { finishReason: step.finishReason });
      }
      if (!(await this.saveSteps([...this.steps, step]))) return { kind: "already-ended" };
      for (const call of calls)
        this.publish({
          type: "run.tool_call",
          data: { runId: this.run.id, step: step.index, toolCall: call },
        });
      for (const result of refused) this.publishToolResult(step.index, result);
    }
  }

  private stepContext(prepared: PreparedRun): StepContext {
    return {
      deps: this.deps,
      run: this.run,
      prepared,
      signal: this.signal,
      modelLabel: this.modelLabel,
      announceAttempt: (attempt) => {
        publishStarted(this.deps.events, this.run, attempt);
        this.announceRetrieval();
      },
      onAttemptStart: (at) => {
        this.startedAt ??= at;
      },
    };
  }

  private publish(event: Parameters<ThreadEventBus["publish"]>[2]): void {
    this.deps.events.publish(this.run.tenantId, this.run.threadId, event);
  }

  private publishToolResult(step: number, result: RunStepRecord["toolResults"][number]): void {
    this.publish({
      type: "run.tool_result",
      data: {
        runId: this.run.id,
        step,
        toolCallId: result.toolCallId,
        name: result.name,
        isError: result.isError,
      },
    });
  }

  private announceRetrieval(): void {
    for (const retrieval of this.unannounced.splice(0)) this.publishRetrieval(retrieval);
  }

  private publishRetrieval(retrieval: RunRetrieval): void {
    this.publish({ type: "run.retrieval", data: { runId: this.run.id, ...retrieval } });
  }

  /** knowledge_base tool calls search through the run's searches: numbered on, recorded, announced. */
  private toolKnowledge(): ToolKnowledge {
    return {
      search: async (knowledgeBase, query, topK) => {
        const knowledge = this.knowledge;
        if (!knowledge) throw new Error("knowledge bases are not available on this server");
        const retrieval = await knowledge.search(knowledgeBase, { query, topK, mode: "hybrid" });
        this.publishRetrieval(retrieval);
        return knowledge.numbered(retrieval);
      },
    };
  }

  /** The step with the query-embedding cost of the searches not yet charged (under success). */
  private charged(step: RunStepRecord): RunStepRecord {
    const pending = this.knowledge?.takeCost() ?? null;
    return pending === null ? step : { ...step, cost: withSuccessCost(step.cost, pending) };
  }

  /** The run's searches for a write (absent when it made none: what is stored stays). */
  private retrieval(): RunRetrieval[] | undefined {
    const retrieval = this.knowledge?.retrieval ?? [];
    return retrieval.length > 0 ? retrieval : undefined;
  }

  /** Stores the steps (before their tools run or after they ran); false when the run has ended meanwhile. */
  private async saveSteps(steps: RunStepRecord[]): Promise<boolean> {
    this.steps = steps;
    return this.deps.store.runs.saveSteps(this.run.id, steps, this.retrieval());
  }

  /** Stores the pause (steps, required action, outbox rows) in one write; the run then holds no slot. */
  private async pause(
    prepared: PreparedRun,
    step: RunStepRecord,
    calls: ToolCall[],
  ): Promise<ExecutionOutcome> {
    const { clock, store } = this.deps;
    const seconds = prepared.definition.toolTimeoutSeconds ?? DEFAULT_TOOL_TIMEOUT_SECONDS;
    const expiresAt = new Date(clock.now().getTime() + seconds * 1000);
    const requiredAction: RequiredAction = {
      type: "submit_tool_outputs",
      toolCalls: calls,
      expiresAt: expiresAt.toISOString(),
    };
    const pause: RunPause = { step: step.index, requiredAction, expiresAt };
    const pausedRun: RunRecord = {
      ...this.run,
      steps: this.steps,
      pause,
      attempts: this.attempts,
      startedAt: this.startedAt,
    };
    const deliveries = (await this.deps.buildWebhookDeliveries?.(pausedRun)) ?? [];
    const retrieval = this.retrieval();
    if (!(await store.runs.pause(this.run.id, { steps: this.steps, pause, deliveries, retrieval }))) {
      return { kind: "already-ended" };
    }
    this.publish({ type: "run.requires_action", data: { runId: this.run.id, requiredAction } });
    return { kind: "paused" };
  }

  private async complete(
    prepared: PreparedRun,
    last: RunStepRecord,
    outputJson?: unknown,
  ): Promise<ExecutionOutcome> {
    const steps = this.steps.at(-1) === last ? this.steps : [...this.steps, last];
    // A final step found stored (an end interrupted before its write): its answer is read again.
    const json = outputJson !== undefined ? outputJson : readOutputJson(prepared, last.text);
    const retrieval = this.knowledge?.retrieval ?? [];
    const knowledge = this.knowledge;
    const citations = knowledge ? citationsOf(last.text, retrieval, (id) => knowledge.textOf(id)) : [];
    const ended = await endRunCompleted(this.deps, this.run, {
      output: last.text,
      outputJson: json,
      finishReason: last.finishReason,
      tokenUsage: sumUsage(steps.map((step) => step.usage)),
      cost: runCostOf(steps),
      startedAt: this.startedAt,
      attempts: this.attempts,
      memory: [...prepared.exchange, ...steps.flatMap(stepMemoryRows)],
      modelLabel: this.modelLabel,
      memoryWindow: prepared.memoryWindow,
      steps,
      retrieval,
      citations,
    });
    return ended ? { kind: "completed" } : { kind: "already-ended" };
  }

  private async endFailed(
    error: string,
    retryBlocks: CostBlock[],
    options: { cancelled?: boolean; finishReason?: RunStepRecord["finishReason"] } = {},
  ): Promise<ExecutionOutcome> {
    // Searches not charged to a step (the run ended before its model answered) still count.
    const pending = this.knowledge?.takeCost() ?? null;
    const cost =
      this.steps.length > 0
        ? withSuccessCost(runCostOf(this.steps, retryBlocks), pending)
        : pending
          ? buildCost(pending, sumCostBlocks(retryBlocks))
          : undefined;
    const retrieval = this.retrieval();
    const ended = await endRunFailed(this.deps, this.run, {
      error,
      finishReason: options.finishReason ?? null,
      retryBlocks,
      ...(cost ? { cost } : {}),
      ...(retrieval ? { retrieval } : {}),
      startedAt: this.startedAt,
      attempts: this.attempts,
      modelLabel: this.modelLabel,
      memoryWindow: this.memoryWindow,
      steps: this.steps,
    });
    this.lastOutcome = ended
      ? { kind: "failed", cancelled: options.cancelled ?? false }
      : { kind: "already-ended" };
    return this.lastOutcome;
  }

  private whenAborted(retryBlocks: CostBlock[]): Promise<ExecutionOutcome> | ExecutionOutcome {
    const interruption = RunInterruption.of(this.signal);
    if (interruption?.kind === "stop") return { kind: "interrupted" };
    return this.endFailed(CANCELLED, retryBlocks, { cancelled: true });
  }
}

/** A stored final answer's parsed JSON (it was checked before it was stored). */
function readOutputJson(prepared: PreparedRun, text: string): unknown {
  const read = outputJsonOf(prepared.definition.output, text);
  return read.ok ? read.value : null;
}

/** The thread learns an attempt began (again after a retry that had sent tokens). */
function publishStarted(events: ThreadEventBus, run: RunRecord, attempt: number): void {
  events.publish(run.tenantId, run.threadId, {
    type: "run.started",
    data: {
      runId: run.id,
      thread: run.threadId,
      channel: run.channel,
      prompt: { slug: run.promptSlug, version: run.promptVersion },
      attempt,
    },
  });
}
