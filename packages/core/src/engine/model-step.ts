/**
 * One step of a run: one model call, with its attempts (retries, backoff, idle and whole-attempt
 * timeouts, the output cap), streaming its text to the thread. What it returns is the step as it
 * will be stored (docs/TOOLS.md "Steps"), or why it ended without one.
 */
import type { LanguageModelV4 } from "@ai-sdk/provider";
import type { ChatMessage, CostBlock, FinishReason, TokenUsage, ToolCall } from "@promptrun/contract";
import { estimateMessageTokens } from "../memory-window.ts";
import { outputJsonOf } from "../models/output-json.ts";
import {
  type AttemptObservation,
  emptyObservation,
  type ModelTool,
  streamModelText,
} from "../models/stream-model-text.ts";
import { tokenUsageFromProvider } from "../models/token-usage.ts";
import type { DownloadedFile } from "../models/url-download.ts";
import type { RunRecord, RunStepRecord } from "../ports.ts";
import { buildCost, costBlock, sumCostBlocks, zeroCostBlock } from "../pricing/cost.ts";
import { lookupModelPrice } from "../pricing/model-price.ts";
import type { EngineMetrics } from "../services.ts";
import { abortableSleep } from "./abortable-sleep.ts";
import { type AttemptFailure, classifyAttemptError } from "./attempt-failure.ts";
import { retryDelayMs } from "./backoff.ts";
import type { PreparedRun } from "./prepared-run.ts";
import type { RunExecutorDeps } from "./run-executor.ts";
import { RunInterruption } from "./run-interruption.ts";

/** A tool call as the model sent it: `input` is JSON text, parsed by the tool step. */
export interface RequestedToolCall {
  id: string;
  name: string;
  input: string;
}

export type StepOutcome =
  /** The model answered; `toolCalls` empty: a final answer (`outputJson` parsed when asked for). */
  | {
      kind: "answered";
      step: RunStepRecord;
      requested: RequestedToolCall[];
      outputJson: unknown;
      /** The run's attempts once this step answered. */
      attempts: number;
    }
  /**
   * A final answer refused (a strict schema mismatch): kept as the last step (its text readable),
   * its cost under retries since the answer was not usable; the run fails.
   */
  | { kind: "refused"; step: RunStepRecord; error: string; attempts: number }
  /** No answer: the run fails with `error`; `retryBlocks` are what its attempts cost. */
  | { kind: "failed"; error: string; retryBlocks: CostBlock[]; attempts: number }
  | { kind: "cancelled"; retryBlocks: CostBlock[]; attempts: number }
  /** Shutdown: the run stays pending and this step is taken again on the next start. */
  | { kind: "interrupted" };

export interface StepRequest {
  index: number;
  messages: ChatMessage[];
  tools: readonly ModelTool[] | undefined;
  /** run.token index of this step's first token. */
  tokenBase: number;
  /** The run's attempts so far (the next one is numbered after them). */
  attemptsBefore: number;
  /** The run's attempts before this step's first (those of the stored steps). */
  stepBase: number;
  /** Attempts this step may take: config.run.maxAttempts, more for a step resumed after restarts. */
  lastAllowedAttempt: number;
  /**
   * Whether its first attempt sends run.started: the run's first step, and a step taken again
   * after a restart (its earlier tokens must be dropped by clients), but not the next step of a
   * tool loop nor a run continuing after its tool outputs came.
   */
  announceFirstAttempt: boolean;
}

type AttemptResult =
  | {
      ok: true;
      output: string;
      outputJson: unknown;
      finishReason: FinishReason;
      usage: TokenUsage;
      toolCalls: RequestedToolCall[];
    }
  | {
      ok: false;
      failure: AttemptFailure;
      interruption: RunInterruption | null;
      consumed: TokenUsage;
      /** Set when the call finished but its answer was refused (a strict schema mismatch). */
      refused?: { output: string; finishReason: FinishReason; usage: TokenUsage };
    };

/** The run's finish reason in the contract's terms (an SDK reason it does not know is `other`). */
const FINISH_REASONS = new Set<string>(["stop", "length", "tool-calls", "content-filter", "error", "other"]);
const contractFinishReason = (unified: string): FinishReason =>
  FINISH_REASONS.has(unified) ? (unified as FinishReason) : "other";

/** Per run: files downloaded for the provider, reused by a retry and by later steps. */
const runDownloads = new WeakMap<object, Map<string, Promise<DownloadedFile>>>();

/** Tokens of the prompt when a provider reported nothing: the memory window's estimate. */
const estimateTokens = (messages: ChatMessage[]): number =>
  messages.reduce((sum, message) => sum + estimateMessageTokens(message), 0);

export interface StepContext {
  deps: RunExecutorDeps;
  run: RunRecord;
  prepared: PreparedRun;
  signal: AbortSignal;
  /** The thread learns an attempt began: on the run's first attempt and after a retry that sent tokens. */
  announceAttempt(attempt: number): void;
  /** The first attempt's start (for the run record). */
  onAttemptStart(at: Date): void;
  modelLabel: string;
}

/** Takes one model call to its end: an answer, or a failure once retries are spent. */
// long-function: the attempt loop shares the step's retry costs and token state across attempts.
export async function runModelStep(context: StepContext, request: StepRequest): Promise<StepOutcome> {
  const { deps, run, prepared, signal } = context;
  const { config, clock, store } = deps;
  const retryBlocks: CostBlock[] = [];
  let tokensSinceStartedEvent = request.announceFirstAttempt;
  const stepStartedAt = clock.now();

  const priceBlock = (usage: TokenUsage): CostBlock =>
    costBlock(
      usage,
      lookupModelPrice(prepared.definition.model, {
        overrides: config.priceOverrides,
        inputTokens: usage.input,
        at: clock.now(),
      }),
    );
  const stepRecord = (
    answer: { output: string; finishReason: FinishReason; usage: TokenUsage },
    toolCalls: ToolCall[],
    attempts: number,
    tokens: number,
  ): RunStepRecord => ({
    index: request.index,
    model: prepared.definition.model,
    text: answer.output,
    toolCalls,
    toolResults: [],
    finishReason: answer.finishReason,
    usage: answer.usage,
    cost: buildCost(priceBlock(answer.usage), sumCostBlocks(retryBlocks)),
    startedAt: stepStartedAt.toISOString(),
    finishedAt: clock.now().toISOString(),
    tokens,
    attempts,
  });

  const firstAttempt = request.attemptsBefore + 1;
  for (let attempt = firstAttempt; ; attempt++) {
    const attemptsTaken = () => attempt - request.stepBase;
    if (signal.aborted) return abortedOutcome(signal, retryBlocks, attempt - 1);
    // The provider call does not wait for this commit: a crash before it lands only means the run
    // (still pending) is executed again on restart. It is awaited before the step is used.
    const attemptStart = clock.now();
    const markedStarted = store.runs.markStarted(run.id, attemptStart, attempt);
    markedStarted.catch(() => {});
    context.onAttemptStart(attemptStart);
    // A retry after tokens went out restarts the step's text: clients drop what they had (contract).
    if (tokensSinceStartedEvent) context.announceAttempt(attempt);
    tokensSinceStartedEvent = false;
    if (attempt === firstAttempt) {
      deps.events.publish(run.tenantId, run.threadId, {
        type: "run.step",
        data: { runId: run.id, step: request.index },
      });
    }

    const attemptStartedAt = Date.now();
    const { result, tokens } = await runAttempt(context, request, () => {
      tokensSinceStartedEvent = true;
    });
    await markedStarted;
    countProviderCall(deps.metrics, context.modelLabel, result, Date.now() - attemptStartedAt);
    if (result.ok) {
      const toolCalls = result.toolCalls.map(({ id, name }) => ({ id, name, arguments: {} }));
      return {
        kind: "answered",
        step: stepRecord(result, toolCalls, attemptsTaken(), tokens),
        requested: result.toolCalls,
        outputJson: result.outputJson,
        attempts: attempt,
      };
    }
    if (result.refused) {
      // The answer came and was paid for: stored as the step (its text readable), never retried.
      const step = stepRecord(result.refused, [], attemptsTaken(), tokens);
      const unusable = buildCost(
        zeroCostBlock(step.cost.success.priced !== false),
        sumCostBlocks([step.cost.success, step.cost.retries]),
      );
      return {
        kind: "refused",
        step: { ...step, cost: unusable },
        error: result.failure.message,
        attempts: attempt,
      };
    }
    retryBlocks.push(priceBlock(result.consumed));
    if (result.interruption?.kind === "stop") return { kind: "interrupted" };
    if (result.interruption?.kind === "cancel") return { kind: "cancelled", retryBlocks, attempts: attempt };
    const finalError = finalErrorOf(result.failure, attemptsTaken(), request.lastAllowedAttempt);
    if (finalError !== null) return { kind: "failed", error: finalError, retryBlocks, attempts: attempt };
    const delay = retryDelayMs({
      retry: attempt - firstAttempt,
      baseMs: config.run.backoffBaseMs,
      maxMs: config.run.backoffMaxMs,
      retryAfterMs: result.failure.retryAfterMs,
      random: deps.random,
    });
    if (!(await abortableSleep(delay, signal))) return abortedOutcome(signal, retryBlocks, attempt);
  }
}

const abortedOutcome = (signal: AbortSignal, retryBlocks: CostBlock[], attempts: number): StepOutcome =>
  RunInterruption.of(signal)?.kind === "stop"
    ? { kind: "interrupted" }
    : { kind: "cancelled", retryBlocks, attempts };

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

/** The run's error when this failed attempt is its step's last one; null when it may be retried. */
function finalErrorOf(failure: AttemptFailure, attempts: number, lastAllowedAttempt: number): string | null {
  if (!failure.retryable) return failure.message;
  if (attempts < lastAllowedAttempt) return null;
  return `gave up after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${failure.message}`;
}

/** What a failed attempt consumed: reported usage, else Anthropic's announced input, else an estimate. */
function consumedBy(observation: AttemptObservation, messages: ChatMessage[]): TokenUsage {
  // A stream cut mid-way can still end in a `finish` part whose usage is all undefined.
  const reported = observation.reportedUsage ? tokenUsageFromProvider(observation.reportedUsage) : null;
  if (reported && reported.total > 0) return reported;
  const output = observation.textChunks;
  // The prompt was certainly processed once text came back; before that we cannot know.
  const input = observation.announcedInputTokens ?? (output > 0 ? estimateTokens(messages) : 0);
  return { input, inputCached: 0, output, reasoning: 0, total: input + output };
}

/** One provider call: streams tokens to the thread, with idle and whole-attempt timeouts. */
// long-function: the watchdogs, the abort wiring and the token relay share the attempt's state.
async function runAttempt(
  context: StepContext,
  request: StepRequest,
  onFirstToken: () => void,
): Promise<{ result: AttemptResult; tokens: number }> {
  const { deps, run, prepared, signal: runSignal } = context;
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
  let index = request.tokenBase;
  let streamError: unknown;
  try {
    await streamModelText(
      resolved.model as LanguageModelV4,
      {
        messages: request.messages,
        tools: request.tools,
        toolChoice: definition.toolChoice,
        params: definition.params,
        modelRef: definition.model,
        // Structured output is asked of the answer, not of a step that calls tools: sent with no
        // tools offered, or always when the prompt has no tools.
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
          if (index === request.tokenBase) onFirstToken();
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

  const result = attemptResultOf(context, request, {
    interruption: RunInterruption.of(controller.signal),
    streamError,
    observation,
    output,
  });
  return { result, tokens: index - request.tokenBase };
}

/** How an attempt's stream ended: the output, or a classified failure and what it consumed. */
function attemptResultOf(
  context: StepContext,
  request: StepRequest,
  ended: {
    interruption: RunInterruption | null;
    streamError: unknown;
    observation: AttemptObservation;
    output: string;
  },
): AttemptResult {
  const { deps, prepared } = context;
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
  const failed = (failure: AttemptFailure, why: RunInterruption | null): AttemptResult => ({
    ok: false,
    failure,
    interruption: why,
    consumed: consumedBy(observation, request.messages),
  });
  if (interruption) return failed(classify(interruption), interruption);
  if (streamError !== undefined) return failed(classify(streamError), null);
  const finishReason = observation.finishReason;
  if (
    !observation.reportedUsage ||
    finishReason === null ||
    finishReason === "error" ||
    finishReason === "interrupted"
  ) {
    return failed(
      {
        retryable: true,
        reason: "stream_interrupted",
        message: `${resolved.provider} stream ended before the response was complete`,
        retryAfterMs: null,
      },
      null,
    );
  }
  const usage = tokenUsageFromProvider(observation.reportedUsage);
  const reason = contractFinishReason(finishReason);
  const toolCalls = observation.toolCalls;
  if (toolCalls.length > 0)
    return { ok: true, output, outputJson: null, finishReason: reason, usage, toolCalls };
  const read = outputJsonOf(prepared.definition.output, output);
  if (!read.ok) {
    return {
      ok: false,
      failure: { retryable: false, reason: "unknown", message: read.error, retryAfterMs: null },
      interruption: null,
      consumed: usage,
      refused: { output, finishReason: reason, usage },
    };
  }
  return { ok: true, output, outputJson: read.value, finishReason: reason, usage, toolCalls: [] };
}

function downloadsOf(prepared: PreparedRun): Map<string, Promise<DownloadedFile>> {
  let downloads = runDownloads.get(prepared);
  if (!downloads) {
    downloads = new Map();
    runDownloads.set(prepared, downloads);
  }
  return downloads;
}
