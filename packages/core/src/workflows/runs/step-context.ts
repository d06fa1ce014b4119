/**
 * What a workflow run's steps show to expressions and to the API (docs/WORKFLOWS.md "Expressions"):
 * `steps.<id>` = `{status, output, outputJson, text}`. A prompt step's output lives on its run; a
 * retrieve step's in the step record. A failed step (continueOnError) and a skipped one show null.
 */
import type { Cost, CostBlock, TokenUsage } from "@promptrun/contract";
import { sumUsage } from "../../engine/run-steps.ts";
import type { RunRecord } from "../../ports.ts";
import { buildCost, sumCostBlocks } from "../../pricing/cost.ts";
import type { ExpressionContext } from "../expressions/index.ts";
import type { WorkflowRunRecord, WorkflowStepRecord } from "../ports.ts";

/** Step run id → its run (read once per advance or read). */
export type StepRuns = ReadonlyMap<string, RunRecord>;

const TERMINAL = new Set(["completed", "failed", "skipped", "cancelled"]);
export const isTerminal = (step: WorkflowStepRecord): boolean => TERMINAL.has(step.status);

/** A step's output and outputJson: its run's for a prompt step, its own for a retrieve step. */
export function stepOutput(
  step: WorkflowStepRecord,
  stepRuns: StepRuns,
): { output: string | null; outputJson: unknown } {
  if (step.status !== "completed") return { output: null, outputJson: null };
  if (step.runId === null) return { output: step.output, outputJson: step.outputJson ?? null };
  const run = stepRuns.get(step.runId);
  return { output: run?.output ?? null, outputJson: run?.outputJson ?? null };
}

/** The expression context over the run's inputs and its ended steps. */
export function expressionContext(
  run: Pick<WorkflowRunRecord, "inputs">,
  steps: readonly WorkflowStepRecord[],
  stepRuns: StepRuns,
): ExpressionContext {
  const view: Record<string, unknown> = {};
  for (const step of steps) {
    if (step.status !== "completed" && step.status !== "failed" && step.status !== "skipped") continue;
    const { output, outputJson } = stepOutput(step, stepRuns);
    view[step.id] = { status: step.status, output, outputJson, text: output };
  }
  return { inputs: run.inputs, steps: view };
}

/** The step runs' usage summed (runs that completed). */
export function summedUsage(runs: readonly RunRecord[]): TokenUsage {
  return sumUsage(runs.flatMap((run) => (run.tokenUsage ? [run.tokenUsage] : [])));
}

/** The step runs' costs summed, success and retries apart; null when none has a cost. */
export function summedCost(runs: readonly RunRecord[]): Cost | null {
  const costs = runs.flatMap((run) => (run.cost ? [run.cost] : []));
  if (costs.length === 0) return null;
  const success: CostBlock[] = costs.map((cost) => cost.success);
  const retries: CostBlock[] = costs.map((cost) => cost.retries);
  return buildCost(sumCostBlocks(success), sumCostBlocks(retries));
}
