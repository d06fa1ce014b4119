/**
 * Ends paused runs whose tool outputs did not come in time (docs/TOOLS.md "Paused runs"): every
 * instance looks for them on a timer; the store's end is a compare-and-set on the pause, so a
 * run whose outputs arrive at the same moment either continues or fails, never both, and a run
 * expired by two instances ends once.
 */
import type { PromptrunConfig } from "../config.ts";
import type { RunRecord } from "../ports.ts";
import { metricsModelLabel } from "../pricing/metrics-model-label.ts";
import { endRunFailed, type RunEndingDeps } from "./run-ending.ts";
import { runCostOf } from "./run-steps.ts";

/** Expired pauses ended per sweep; more wait for the next one. */
const SWEEP_BATCH = 100;

export const pauseExpiredError = (expiresAt: Date): string =>
  `tool outputs were not submitted before ${expiresAt.toISOString()}`;

/** Fails a run still paused at its pause's step; true when this call ended it. */
export async function expirePause(
  deps: RunEndingDeps,
  config: Pick<PromptrunConfig, "priceOverrides">,
  run: RunRecord,
): Promise<boolean> {
  const pause = run.pause;
  if (!pause) return false;
  const model = run.steps.at(-1)?.model;
  return endRunFailed(deps, run, {
    error: pauseExpiredError(pause.expiresAt),
    pausedStep: pause.step,
    steps: run.steps,
    cost: runCostOf(run.steps),
    finishReason: run.steps.at(-1)?.finishReason ?? null,
    ...(model ? { modelLabel: metricsModelLabel(model, config.priceOverrides) } : {}),
  });
}

export interface PauseExpiryOptions {
  ending: RunEndingDeps;
  config: Pick<PromptrunConfig, "priceOverrides" | "tools">;
  /** A run this sweep ended: its channel is free for the next run. */
  onExpired(run: RunRecord): void;
  logError(message: string, error: unknown): void;
}

/** Starts the sweep; returns its stop. */
export function startPauseExpiry(options: PauseExpiryOptions): () => void {
  const { ending, config } = options;
  let sweeping = false;
  const sweep = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      const expired = await ending.store.runs.listExpiredPauses(ending.clock.now(), SWEEP_BATCH);
      for (const run of expired) {
        if (await expirePause(ending, config, run)) options.onExpired(run);
      }
    } catch (error) {
      options.logError("expiring paused runs failed; retried at the next sweep", error);
    } finally {
      sweeping = false;
    }
  };
  const timer = setInterval(() => void sweep(), config.tools.pauseSweepMs);
  timer.unref?.();
  void sweep();
  return () => clearInterval(timer);
}
