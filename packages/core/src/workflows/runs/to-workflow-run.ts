import type { WorkflowRun, WorkflowRunPhase, WorkflowRunStep } from "@promptrun/contract";
import type { CompiledWorkflow } from "../graph.ts";
import type { WorkflowRunRecord, WorkflowStepRecord } from "../ports.ts";
import type { StepRuns } from "./step-context.ts";

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/** A step as the API shows it: a prompt step's output, error and times from its run. */
function toStep(
  step: WorkflowStepRecord,
  graph: CompiledWorkflow | null,
  stepRuns: StepRuns,
): WorkflowRunStep {
  const kind = graph?.byId.get(step.id)?.kind ?? (step.runId === null ? "retrieve" : "prompt");
  const run = step.runId === null ? undefined : stepRuns.get(step.runId);
  if (!run) {
    return {
      id: step.id,
      kind,
      status: step.status,
      runId: step.runId,
      output: step.output,
      outputJson: step.outputJson ?? null,
      error: step.error,
      startedAt: iso(step.startedAt),
      finishedAt: iso(step.finishedAt),
    };
  }
  // Between a step run's end and the advance that records it, the run tells.
  const status = step.status === "running" && run.status !== "pending" ? run.status : step.status;
  return {
    id: step.id,
    kind,
    status,
    runId: run.id,
    output: run.output,
    outputJson: run.outputJson ?? null,
    error: run.error ?? (status === "cancelled" ? step.error : null),
    startedAt: iso(run.startedAt),
    // A step the workflow cancelled ended when the workflow did, whenever its run noticed.
    finishedAt: iso(status === "cancelled" ? step.finishedAt : (run.finishedAt ?? step.finishedAt)),
  };
}

/** queued until a step starts, requires_action while a step run waits for tool outputs, else running. */
function phaseOf(record: WorkflowRunRecord, stepRuns: StepRuns): WorkflowRunPhase | null {
  if (record.status !== "pending") return null;
  for (const step of record.steps) {
    const run = step.runId === null ? undefined : stepRuns.get(step.runId);
    if (run?.status === "pending" && run.pause !== null) return "requires_action";
  }
  return record.startedAt === null ? "queued" : "running";
}

/** The contract's WorkflowRun (REST, tRPC, webhooks): the record with its steps' runs merged in. */
export function toWorkflowRun(
  record: WorkflowRunRecord,
  graph: CompiledWorkflow | null,
  stepRuns: StepRuns,
): WorkflowRun {
  const ended = record.status !== "pending";
  return {
    id: record.id,
    status: record.status,
    phase: phaseOf(record, stepRuns),
    createdAt: record.createdAt.toISOString(),
    startedAt: iso(record.startedAt),
    finishedAt: iso(record.finishedAt),
    output: ended ? record.output : null,
    outputJson: ended ? (record.outputJson ?? null) : null,
    error: ended ? record.error : null,
    tokenUsage: ended ? record.tokenUsage : null,
    cost: ended ? record.cost : null,
    thread: record.threadId,
    workflow: { slug: record.workflowSlug, version: record.workflowVersion, id: record.workflowVersionId },
    priority: record.priority,
    environment: record.environment,
    metadata: record.metadata,
    inputs: record.inputs,
    steps: record.steps.map((step) => toStep(step, graph, stepRuns)),
  };
}
