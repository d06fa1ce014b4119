import type { LanguageModelV4 } from "@ai-sdk/provider";
import type {
  CostBlock,
  FinishReason,
  PromptDefinition,
  PromptMessage,
  RunMemory,
  TokenUsage,
} from "@promptrun/contract";
import type { PromptrunConfig } from "../config.ts";
import { loadEnvironmentVars } from "../environments/load-environment-vars.ts";
import { PromptrunError } from "../errors.ts";
import { estimateMessageTokens } from "../memory-window.ts";
import type { ModelGateway, ResolvedModel } from "../models/model-gateway.ts";
import { outputJsonOf } from "../models/output-json.ts";
import { type AttemptObservation, emptyObservation, streamModelText } from "../models/stream-model-text.ts";
import { tokenUsageFromProvider } from "../models/token-usage.ts";
import type { DownloadedFile } from "../models/url-download.ts";
import type { Clock, RunRecord, Store, ThreadEventBus, WebhookDeliveryRecord } from "../ports.ts";
import { buildCost, costBlock, sumCostBlocks } from "../pricing/cost.ts";
import { metricsModelLabel } from "../pricing/metrics-model-label.ts";
import { lookupModelPrice } from "../pricing/model-price.ts";
import { type RenderedRunRequest, renderRunRequest } from "../rendering/run-request.ts";
import type { SecretBox } from "../security/secret-box.ts";
import type { EngineMetrics } from "../services.ts";
import { abortableSleep } from "./abortable-sleep.ts";
import { type AttemptFailure, classifyAttemptError } from "./attempt-failure.ts";
import { retryDelayMs } from "./backoff.ts";
import { CANCELLED, endRunCompleted, endRunFailed } from "./run-ending.ts";
import { RunInterruption } from "./run-interruption.ts";

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
}

/**
 * completed / failed: this execution ended the run (the store accepted it).
 * already-ended: the store said the run had ended elsewhere (CAS lost).
 * interrupted: stopped for shutdown; the run stays pending and resumes on the next start.
 */
export type ExecutionOutcome =
  | { kind: "completed" }
  | { kind: "failed"; cancelled: boolean }
  | { kind: "already-ended" }
  | { kind: "interrupted" };

/** Attempts a resumed run may take past config.run.maxAttempts (interruptions are not its fault). */
const RESUMES_BEYOND_ATTEMPT_LIMIT = 10;

/** Tokens of the prompt when a provider reported nothing: the memory window's estimate. */
const estimateTokens = (messages: PromptMessage[]): number =>
  messages.reduce((sum, message) => sum + estimateMessageTokens(message), 0);

/** The run's request (core/src/rendering/run-request.ts) with its version and resolved model. */
interface PreparedRun extends RenderedRunRequest {
  definition: PromptDefinition;
  resolved: ResolvedModel;
}

type AttemptResult =
  | { ok: true; output: string; outputJson: unknown; finishReason: FinishReason; usage: TokenUsage }
  | {
      ok: false;
      failure: AttemptFailure;
      interruption: RunInterruption | null;
      consumed: TokenUsage;
      /** Set when the call finished but its answer was refused (a strict schema mismatch). */
      finishReason?: FinishReason;
    };

/** The run's finish reason in the contract's terms (an SDK reason it does not know is `other`). */
const FINISH_REASONS = new Set<string>(["stop", "length", "tool-calls", "content-filter", "error", "other"]);
const contractFinishReason = (unified: string): FinishReason =>
  FINISH_REASONS.has(unified) ? (unified as FinishReason) : "other";

/** Per run: files downloaded for the provider, reused by a retry. */
const runDownloads = new WeakMap<object, Map<string, Promise<DownloadedFile>>>();

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Runs one run to its end (or until shutdown interrupts it). Never throws for run-level failures. */
// long-function: the run's state (start, label, memory window, retry costs) is shared by its end closures.
export async function executeRun(
  deps: RunExecutorDeps,
  run: RunRecord,
  envVars: Record<string, string> | undefined,
  signal: AbortSignal,
): Promise<ExecutionOutcome> {
  const { config, clock, store } = deps;
  const retryBlocks: CostBlock[] = [];
  /** First attempt's start, for the final record handed to webhooks. */
  let startedAt = run.startedAt;
  /** Metrics label: the prompt's `provider:model` once known, if the server knows it (else `other`). */
  let modelLabel = "unknown";
  /** The next attempt announces itself with run.started (the first, and a retry after tokens). */
  let tokensSinceStartedEvent = true;

  const priceBlock = (modelRef: string, usage: TokenUsage): CostBlock =>
    costBlock(
      usage,
      lookupModelPrice(modelRef, {
        overrides: config.priceOverrides,
        inputTokens: usage.input,
        at: clock.now(),
      }),
    );

  /** History carried and left out, once prepared (a run that failed before has none). */
  let memoryWindow: RunMemory | null = null;

  const endFailed = async (
    error: string,
    cancelled: boolean,
    lastAttempt: number,
    finishReason: FinishReason | null = null,
  ): Promise<ExecutionOutcome> => {
    const ended = await endRunFailed(deps, run, {
      error,
      finishReason,
      retryBlocks,
      startedAt,
      attempts: lastAttempt,
      modelLabel,
      memoryWindow,
    });
    return ended ? { kind: "failed", cancelled } : { kind: "already-ended" };
  };

  const endCompleted = async (
    prepared: PreparedRun,
    result: { output: string; outputJson: unknown; finishReason: FinishReason; usage: TokenUsage },
    attempt: number,
  ): Promise<ExecutionOutcome> => {
    const ended = await endRunCompleted(deps, run, {
      output: result.output,
      outputJson: result.outputJson,
      finishReason: result.finishReason,
      tokenUsage: result.usage,
      cost: buildCost(priceBlock(prepared.definition.model, result.usage), sumCostBlocks(retryBlocks)),
      startedAt,
      attempts: attempt,
      memory: [...prepared.exchange, { role: "assistant", content: result.output }],
      modelLabel,
      memoryWindow: prepared.memoryWindow,
    });
    return ended ? { kind: "completed" } : { kind: "already-ended" };
  };

  /**
   * The provider call does not wait for this commit: a crash before it lands only means the run
   * (still pending in the store) is executed again on restart. It is awaited before the run's
   * end is written, so the two never race.
   */
  const beginAttempt = (attempt: number): Promise<unknown> => {
    const attemptStart = clock.now();
    const markedStarted = store.runs.markStarted(run.id, attemptStart, attempt);
    markedStarted.catch(() => {});
    startedAt ??= attemptStart;
    // A retry after tokens went out restarts the text: clients drop what they had (contract).
    if (tokensSinceStartedEvent) publishStarted(deps.events, run, attempt);
    tokensSinceStartedEvent = false;
    return markedStarted;
  };

  /** Waits before the next attempt; false when a cancel or shutdown cut the wait short. */
  const backOff = (retry: number, failure: AttemptFailure): Promise<boolean> =>
    abortableSleep(
      retryDelayMs({
        retry,
        baseMs: config.run.backoffBaseMs,
        maxMs: config.run.backoffMaxMs,
        retryAfterMs: failure.retryAfterMs,
        random: deps.random,
      }),
      signal,
    );

  const whenAborted = (lastAttempt: number): Promise<ExecutionOutcome> | ExecutionOutcome => {
    const interruption = RunInterruption.of(signal);
    if (interruption?.kind === "stop") return { kind: "interrupted" };
    return endFailed(CANCELLED, true, lastAttempt);
  };

  const failToStart = (error: unknown) =>
    signal.aborted ? whenAborted(run.attempts) : endFailed(startErrorOf(error), false, run.attempts);

  const preparation = await prepare(deps, run, envVars).then(
    (prepared) => ({ prepared }),
    (error: unknown) => ({ error }),
  );
  if ("error" in preparation) return failToStart(preparation.error);
  const { prepared } = preparation;
  modelLabel = metricsModelLabel(prepared.definition.model, config.priceOverrides);
  memoryWindow = prepared.memoryWindow;

  // A resumed run continues its attempt count but always gets at least one more attempt, up to a
  // bound: a run that keeps taking the process down with it must not loop across restarts.
  if (run.attempts >= config.run.maxAttempts + RESUMES_BEYOND_ATTEMPT_LIMIT) {
    const error = `run was interrupted ${run.attempts} times (server restarts); giving up`;
    return endFailed(error, false, run.attempts);
  }
  const firstAttempt = run.attempts + 1;
  const lastAllowedAttempt = Math.max(config.run.maxAttempts, firstAttempt);

  for (let attempt = firstAttempt; ; attempt++) {
    if (signal.aborted) return whenAborted(attempt - 1);
    const markedStarted = beginAttempt(attempt);

    const attemptStartedAt = Date.now();
    const result = await runAttempt(deps, run, prepared, signal, () => {
      tokensSinceStartedEvent = true;
    });
    await markedStarted;
    countProviderCall(deps.metrics, modelLabel, result, Date.now() - attemptStartedAt);
    if (result.ok) return endCompleted(prepared, result, attempt);

    retryBlocks.push(priceBlock(prepared.definition.model, result.consumed));
    if (result.interruption?.kind === "stop") return { kind: "interrupted" };
    if (result.interruption?.kind === "cancel") return endFailed(CANCELLED, true, attempt);
    const finalError = finalErrorOf(result.failure, attempt, lastAllowedAttempt);
    if (finalError !== null) return endFailed(finalError, false, attempt, result.finishReason ?? null);
    if (!(await backOff(attempt - firstAttempt, result.failure))) return whenAborted(attempt);
  }
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

/** Shutdown and cancel are our doing, not the provider's: not counted as provider calls. */
function countProviderCall(
  metrics: EngineMetrics | undefined,
  modelLabel: string,
  result: AttemptResult,
  latencyMs: number,
): void {
  const interruption = result.ok ? null : result.interruption;
  if (interruption && interruption.kind !== "idle" && interruption.kind !== "timeout") return;
  metrics?.providerCall(modelLabel, result.ok ? "ok" : "error", latencyMs);
}

/** The run's error when this failed attempt is its last one; null when it may be retried. */
function finalErrorOf(failure: AttemptFailure, attempt: number, lastAllowedAttempt: number): string | null {
  if (!failure.retryable) return failure.message;
  if (attempt < lastAllowedAttempt) return null;
  return `gave up after ${attempt} attempt${attempt === 1 ? "" : "s"}: ${failure.message}`;
}

/** The run's error when it could not be prepared (prompt gone, env vars undecryptable…). */
const startErrorOf = (error: unknown): string =>
  PromptrunError.isInstance(error) ? error.message : `run could not start: ${messageOf(error)}`;

/** Loads what the run needs: version, env (environment + run overrides), model, messages. */
async function prepare(
  deps: RunExecutorDeps,
  run: RunRecord,
  plaintextEnvVars: Record<string, string> | undefined,
): Promise<PreparedRun> {
  const { store, secrets } = deps;
  // Independent reads: issued together so an asynchronous store overlaps them.
  const versionRead = store.prompts.resolveVersion(run.tenantId, run.promptSlug, {
    kind: "id",
    id: run.promptVersionId,
  });
  const environmentRead = loadEnvironmentVars(store, secrets, run.tenantId, run.environment);
  // Whichever is not awaited first must not become an unhandled rejection.
  environmentRead.catch(() => {});
  const version = await versionRead;
  if (!version) {
    throw new PromptrunError(
      "not_found",
      `prompt ${run.promptSlug} version ${run.promptVersion} no longer exists`,
    );
  }
  const definition = version.definition;

  const tenantEnv = await tenantEnvOf(deps.secrets, run, environmentRead, plaintextEnvVars);

  const resolving = deps.models.resolve({
    modelRef: definition.model,
    tenantEnv,
    params: definition.params,
  });
  resolving.catch(() => {});
  // The window's bound needs the rendered messages (their share of the context): read after them.
  const request = await renderRunRequest(definition, run.inputs, tenantEnv, {
    runs: store.runs,
    bound: deps.config.memory,
    channel: run,
  });
  return { definition, resolved: await resolving, ...request };
}

/** The environment's env vars overlaid with the run's (plaintext, else decrypted from the record). */
async function tenantEnvOf(
  secrets: SecretBox,
  run: RunRecord,
  environmentRead: Promise<Record<string, string>>,
  plaintextEnvVars: Record<string, string> | undefined,
): Promise<Record<string, string>> {
  let environmentEnv: Record<string, string>;
  try {
    environmentEnv = await environmentRead;
  } catch (error) {
    if (PromptrunError.isInstance(error)) throw error;
    throw new PromptrunError(
      "internal",
      `the env vars of environment '${run.environment}' could not be decrypted (was PROMPTRUN_SECRET changed?)`,
    );
  }
  let runEnv = plaintextEnvVars;
  if (!runEnv && run.encryptedEnvVars) {
    try {
      runEnv = secrets.decryptJson<Record<string, string>>(run.encryptedEnvVars);
    } catch {
      throw new PromptrunError(
        "internal",
        "the run's envVars could not be decrypted (was PROMPTRUN_SECRET changed?)",
      );
    }
  }
  return { ...environmentEnv, ...runEnv };
}

/** What a failed attempt consumed: reported usage, else Anthropic's announced input, else an estimate. */
function consumedBy(observation: AttemptObservation, messages: PromptMessage[]): TokenUsage {
  // A stream cut mid-way can still end in a `finish` part whose usage is all undefined.
  const reported = observation.reportedUsage ? tokenUsageFromProvider(observation.reportedUsage) : null;
  if (reported && reported.total > 0) return reported;
  const output = observation.textChunks;
  // The prompt was certainly processed once text came back; before that we cannot know.
  const input = observation.announcedInputTokens ?? (output > 0 ? estimateTokens(messages) : 0);
  return { input, inputCached: 0, output, reasoning: 0, total: input + output };
}

/** One provider call: streams tokens to the thread, with idle and whole-attempt timeouts. */
async function runAttempt(
  deps: RunExecutorDeps,
  run: RunRecord,
  prepared: PreparedRun,
  runSignal: AbortSignal,
  onFirstToken: () => void,
): Promise<AttemptResult> {
  const { config, events } = deps;
  const { resolved, definition } = prepared;
  const controller = new AbortController();
  const abort = (reason: RunInterruption) => {
    if (!controller.signal.aborted) controller.abort(reason);
  };
  const forwardRunAbort = () => abort(RunInterruption.of(runSignal) ?? new RunInterruption("cancel"));
  runSignal.addEventListener("abort", forwardRunAbort, { once: true });
  // A cancel that landed just before the listener existed must still stop this attempt.
  if (runSignal.aborted) forwardRunAbort();
  const attemptTimer = setTimeout(() => abort(new RunInterruption("timeout")), config.run.attemptTimeoutMs);
  // The idle watchdog is re-armed lazily: a part only stamps the time, and the timer (when it
  // fires) re-schedules itself for what is left, so a token costs no timer churn.
  const idleTimeoutMs = config.run.idleTimeoutMs;
  let lastActivity = performance.now();
  const checkIdle = () => {
    const idleFor = performance.now() - lastActivity;
    if (idleFor >= idleTimeoutMs) abort(new RunInterruption("idle"));
    else idleTimer = setTimeout(checkIdle, idleTimeoutMs - idleFor);
  };
  let idleTimer: ReturnType<typeof setTimeout> = setTimeout(checkIdle, idleTimeoutMs);
  const touch = () => {
    lastActivity = performance.now();
  };

  const observation = emptyObservation();
  let output = "";
  let outputBytes = 0;
  let index = 0;
  let streamError: unknown;
  try {
    await streamModelText(
      resolved.model as LanguageModelV4,
      {
        messages: prepared.messages,
        params: definition.params,
        modelRef: definition.model,
        output: definition.output,
        providerOptions: definition.providerOptions,
        ...(resolved.download ? { download: resolved.download, downloads: downloadsOf(prepared) } : {}),
        signal: controller.signal,
        onActivity: touch,
        onText: (delta) => {
          if (controller.signal.aborted) return;
          outputBytes += Buffer.byteLength(delta);
          if (outputBytes > config.run.maxOutputBytes) {
            abort(new RunInterruption("output_limit"));
            return;
          }
          if (index === 0) onFirstToken();
          output += delta;
          events.publish(run.tenantId, run.threadId, {
            type: "run.token",
            data: { runId: run.id, channel: run.channel, index: index++, delta },
          });
        },
      },
      observation,
    );
  } catch (error) {
    streamError = error;
  } finally {
    clearTimeout(attemptTimer);
    clearTimeout(idleTimer);
    runSignal.removeEventListener("abort", forwardRunAbort);
  }
  streamError ??= observation.streamError;

  return attemptResultOf(deps, prepared, {
    interruption: RunInterruption.of(controller.signal),
    streamError,
    observation,
    output,
  });
}

/** How an attempt's stream ended: the output, or a classified failure and what it consumed. */
function attemptResultOf(
  deps: RunExecutorDeps,
  prepared: PreparedRun,
  ended: {
    interruption: RunInterruption | null;
    streamError: unknown;
    observation: AttemptObservation;
    output: string;
  },
): AttemptResult {
  const { config } = deps;
  const { resolved } = prepared;
  const { interruption, streamError, observation, output } = ended;
  const classify = (error: unknown) =>
    classifyAttemptError(error, {
      provider: resolved.provider,
      secrets: resolved.secrets,
      now: deps.clock.now(),
      idleTimeoutMs: config.run.idleTimeoutMs,
      attemptTimeoutMs: config.run.attemptTimeoutMs,
      maxOutputBytes: config.run.maxOutputBytes,
    });
  if (interruption) {
    return {
      ok: false,
      failure: classify(interruption),
      interruption,
      consumed: consumedBy(observation, prepared.messages),
    };
  }
  if (streamError !== undefined) {
    return {
      ok: false,
      failure: classify(streamError),
      interruption: null,
      consumed: consumedBy(observation, prepared.messages),
    };
  }
  const finishReason = observation.finishReason;
  if (
    !observation.reportedUsage ||
    finishReason === null ||
    finishReason === "error" ||
    finishReason === "interrupted"
  ) {
    const failure: AttemptFailure = {
      retryable: true,
      reason: "stream_interrupted",
      message: `${resolved.provider} stream ended before the response was complete`,
      retryAfterMs: null,
    };
    return { ok: false, failure, interruption: null, consumed: consumedBy(observation, prepared.messages) };
  }
  const usage = tokenUsageFromProvider(observation.reportedUsage);
  const read = outputJsonOf(prepared.definition.output, output);
  const reason = contractFinishReason(finishReason);
  if (!read.ok) {
    // The answer came and was paid for: it counts as a failed attempt, never retried.
    const failure: AttemptFailure = {
      retryable: false,
      reason: "unknown",
      message: read.error,
      retryAfterMs: null,
    };
    return { ok: false, failure, interruption: null, consumed: usage, finishReason: reason };
  }
  return { ok: true, output, outputJson: read.value, finishReason: reason, usage };
}

function downloadsOf(prepared: PreparedRun): Map<string, Promise<DownloadedFile>> {
  let downloads = runDownloads.get(prepared);
  if (!downloads) {
    downloads = new Map();
    runDownloads.set(prepared, downloads);
  }
  return downloads;
}
