/**
 * The next state of a pending workflow run (docs/WORKFLOWS.md "Running a workflow"), computed from
 * what is stored: its steps, their runs and the compiled graph. Steps are visited in topological
 * order, so a step skipped, failed or retrieved in this pass lets its dependents go in the same
 * pass. Nothing is written here: the advancer writes the plan with one compare-and-set.
 */
import { WORKFLOW_CANCELLED } from "@promptrun/contract";
import { truncateErrorMessage } from "../../engine/run-ending.ts";
import type { NewRun } from "../../ports.ts";
import { asText } from "../expressions/index.ts";
import type { CompiledStep, CompiledWorkflow } from "../graph.ts";
import type { WorkflowRunRecord, WorkflowStepRecord } from "../ports.ts";
import { expressionContext, isTerminal, type StepRuns, stepOutput } from "./step-context.ts";

/** How steps start; a throw fails the step with the error's message. */
export interface StepActions {
  /** The prompt run of a prompt step whose inputs evaluated to `inputs` (checked as a run create checks them). */
  startPrompt(step: CompiledStep, inputs: unknown): Promise<NewRun>;
  /** A retrieve step's search: its `[n] file: text` lines and `{chunks}`. */
  retrieve(step: CompiledStep, query: string): Promise<{ output: string; outputJson: unknown }>;
}

export interface WorkflowEnding {
  status: "completed" | "failed";
  output: string | null;
  outputJson: unknown;
  error: string | null;
}

export interface AdvancePlan {
  steps: WorkflowStepRecord[];
  newRuns: NewRun[];
  /** Set when this plan starts the run's first step. */
  startedAt: Date | undefined;
  /** Steps whose status changed, in file order. */
  changed: WorkflowStepRecord[];
  ending: WorkflowEnding | null;
  /** Pending step runs to cancel once the run has ended failed. */
  toCancel: string[];
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Running prompt steps take their run's end. */
function syncWithRuns(steps: WorkflowStepRecord[], stepRuns: StepRuns): void {
  for (const step of steps) {
    if (step.status !== "running" || step.runId === null) continue;
    const run = stepRuns.get(step.runId);
    if (run?.status === "pending") continue;
    step.status = run?.status ?? "failed";
    step.error = run ? run.error : "the step's run no longer exists";
    step.finishedAt = run?.finishedAt ?? null;
  }
}

/** The first failed step that fails the workflow (no continueOnError), in file order. */
const fatalFailure = (steps: WorkflowStepRecord[], graph: CompiledWorkflow): WorkflowStepRecord | undefined =>
  steps.find((step) => step.status === "failed" && !graph.byId.get(step.id)?.continueOnError);

// long-function: one pass over the graph in topological order; each branch is a step rule of docs/WORKFLOWS.md.
export async function planAdvance(
  run: WorkflowRunRecord,
  graph: CompiledWorkflow,
  stepRuns: StepRuns,
  actions: StepActions,
  now: Date,
): Promise<AdvancePlan | null> {
  const steps = run.steps.map((step) => ({ ...step }));
  const byId = new Map(steps.map((step) => [step.id, step]));
  syncWithRuns(steps, stepRuns);
  const newRuns: NewRun[] = [];
  let started = false;
  const fail = (step: WorkflowStepRecord, error: string) => {
    step.status = "failed";
    step.error = truncateErrorMessage(error);
    step.finishedAt = now;
  };
  for (const id of graph.order) {
    if (fatalFailure(steps, graph)) break;
    const step = byId.get(id);
    const compiled = graph.byId.get(id);
    if (!step || !compiled || step.status !== "pending") continue;
    const needs = compiled.dependsOn.map((name) => byId.get(name));
    if (needs.some((need) => !need || !isTerminal(need))) continue;
    if (needs.some((need) => need?.status === "skipped" || need?.status === "cancelled")) {
      step.status = "skipped";
      step.finishedAt = now;
      continue;
    }
    const context = expressionContext(run, steps, stepRuns);
    let proceed: boolean;
    try {
      proceed = compiled.when === null || compiled.when.evaluate(context) === true;
    } catch (error) {
      fail(step, `when: ${messageOf(error)}`);
      continue;
    }
    if (!proceed) {
      step.status = "skipped";
      step.finishedAt = now;
      continue;
    }
    started = true;
    step.startedAt = now;
    try {
      if (compiled.kind === "prompt") {
        const inputs = compiled.inputs?.value(context) ?? {};
        const newRun = await actions.startPrompt(compiled, inputs);
        newRuns.push(newRun);
        step.status = "running";
        step.runId = newRun.id;
      } else {
        const query = compiled.query?.render(context) ?? "";
        const found = await actions.retrieve(compiled, query);
        Object.assign(step, { status: "completed", ...found, finishedAt: now });
      }
    } catch (error) {
      fail(step, messageOf(error));
    }
  }
  const failed = fatalFailure(steps, graph);
  let ending: WorkflowEnding | null = null;
  const toCancel: string[] = [];
  if (failed) {
    ending = {
      status: "failed",
      output: null,
      outputJson: null,
      error: truncateErrorMessage(`step '${failed.id}' failed: ${failed.error ?? "failed"}`),
    };
    const startedNow = new Set(newRuns.map((newRun) => newRun.id));
    newRuns.length = 0;
    for (const step of steps) {
      if (step.status !== "pending" && step.status !== "running") continue;
      if (step.runId !== null && startedNow.has(step.runId)) step.runId = null;
      else if (step.runId !== null) toCancel.push(step.runId);
      Object.assign(step, { status: "cancelled", error: WORKFLOW_CANCELLED, finishedAt: now });
    }
  } else if (steps.every(isTerminal)) {
    ending = completion(run, graph, steps, stepRuns);
  }
  const before = new Map(run.steps.map((step) => [step.id, step.status]));
  const changed = steps.filter((step) => before.get(step.id) !== step.status);
  if (changed.length === 0 && ending === null) return null;
  return {
    steps,
    newRuns,
    startedAt: started && run.startedAt === null ? now : undefined,
    changed,
    ending,
    toCancel,
  };
}

const WHOLE_STEP_OUTPUT = /^\{\{\s*steps\.([a-z][a-z0-9_-]*)\.output\s*\}\}$/;

/**
 * The end of a run whose steps have all ended: the output template rendered over the final
 * context (absent: the output of the last step in file order that completed); outputJson by the
 * rules of docs/WORKFLOWS.md "Output". A template that fails to evaluate fails the run.
 */
function completion(
  run: WorkflowRunRecord,
  graph: CompiledWorkflow,
  steps: WorkflowStepRecord[],
  stepRuns: StepRuns,
): WorkflowEnding {
  if (graph.output === null) {
    const last = steps.filter((step) => step.status === "completed").at(-1);
    const { output, outputJson } = last ? stepOutput(last, stepRuns) : { output: null, outputJson: null };
    return { status: "completed", output: output ?? "", outputJson, error: null };
  }
  const context = expressionContext(run, steps, stepRuns);
  let value: unknown;
  try {
    value = graph.output.value(context);
  } catch (error) {
    return { status: "failed", output: null, outputJson: null, error: `output: ${messageOf(error)}` };
  }
  const output = typeof value === "string" ? value : asText(value);
  const named = WHOLE_STEP_OUTPUT.exec(graph.output.source)?.[1];
  const namedStep = named === undefined ? undefined : steps.find((step) => step.id === named);
  const outputJson = namedStep
    ? stepOutput(namedStep, stepRuns).outputJson
    : typeof value === "string"
      ? null
      : (value ?? null);
  return { status: "completed", output, outputJson, error: null };
}
