/**
 * The advancer (docs/WORKFLOWS.md "Running a workflow"): reads a pending workflow run, its step
 * runs and its graph, plans the next state (plan-advance.ts) and writes it with one
 * compare-and-set on the run's revision; a lost compare-and-set reads again. In-process, the
 * advances of one run are serialized (a promise chain per id); across instances and restarts the
 * compare-and-set decides, so a step starts at most once and a run ends once. Only the winner
 * enqueues the new step runs and publishes the events.
 */
import { WORKFLOW_CANCELLED } from "@promptrun/contract";
import { buildCost, zeroCostBlock } from "../../pricing/cost.ts";
import { pendingRunRecord } from "../../run-record.ts";
import type { WorkflowRunChange, WorkflowRunRecord } from "../ports.ts";
import { type AdvancePlan, planAdvance, type WorkflowEnding } from "./plan-advance.ts";
import { stepActionsOf } from "./step-actions.ts";
import { type StepRuns, summedCost, summedUsage } from "./step-context.ts";
import type { WorkflowRunContext } from "./workflow-run-context.ts";

/** Compare-and-set attempts of one advance before it gives up (another instance keeps winning). */
const MAX_ROUNDS = 50;

export function createWorkflowAdvancer(context: WorkflowRunContext) {
  const { deps } = context;
  const { store } = deps;
  const chains = new Map<string, Promise<unknown>>();

  /** Runs `task` after every earlier task of the same workflow run (in this process). */
  function serialized<T>(id: string, task: () => Promise<T>): Promise<T> {
    const result = (chains.get(id) ?? Promise.resolve()).then(task);
    const tail = result.catch(() => {});
    chains.set(id, tail);
    void tail.then(() => {
      if (chains.get(id) === tail) chains.delete(id);
    });
    return result;
  }

  /** One round: true when done (nothing to do, or this round's write won). */
  async function advanceOnce(id: string): Promise<boolean> {
    const run = await store.workflows.getRunById(id);
    if (run?.status !== "pending") return true;
    const graph = await context.graphOf(run);
    const stepRuns = await context.stepRunsOf(run);
    const envVars = run.encryptedEnvVars
      ? deps.secrets.decryptJson<Record<string, string>>(run.encryptedEnvVars)
      : undefined;
    const now = deps.clock.now();
    const plan = graph
      ? await planAdvance(run, graph, stepRuns, stepActionsOf(context, run, envVars), now)
      : versionGone(run, now);
    if (plan === null) return true;
    const change = await changeOf(run, plan, stepRuns, now);
    if (!(await store.workflows.advance(id, run.revision, change))) return false;
    published(run, plan, change, envVars);
    return true;
  }

  /** The store change of a plan: with the end, its cost, usage and webhook rows. */
  async function changeOf(
    run: WorkflowRunRecord,
    plan: AdvancePlan,
    stepRuns: StepRuns,
    now: Date,
  ): Promise<WorkflowRunChange> {
    const change: WorkflowRunChange = { steps: plan.steps, newRuns: plan.newRuns };
    if (plan.startedAt) change.startedAt = plan.startedAt;
    if (plan.ending) change.end = await endOf(run, plan.steps, plan.ending, stepRuns, now);
    return change;
  }

  async function endOf(
    run: WorkflowRunRecord,
    steps: WorkflowRunRecord["steps"],
    ending: WorkflowEnding,
    stepRuns: StepRuns,
    now: Date,
  ): Promise<NonNullable<WorkflowRunChange["end"]>> {
    const runs = [...stepRuns.values()];
    const summed = summedCost(runs);
    const completed = ending.status === "completed";
    const end = {
      ...ending,
      tokenUsage: completed ? summedUsage(runs) : null,
      cost: completed ? (summed ?? buildCost(zeroCostBlock(), zeroCostBlock())) : summed,
      finishedAt: now,
    };
    const ended: WorkflowRunRecord = { ...run, ...end, steps, encryptedEnvVars: null };
    const deliveries = await context.endDeliveries(ended, await context.graphOf(run), stepRuns);
    return { ...end, deliveries };
  }

  /** After a winning write: the step runs go to the engine, the thread hears of every change. */
  function published(
    run: WorkflowRunRecord,
    plan: Pick<AdvancePlan, "changed" | "newRuns" | "toCancel">,
    change: WorkflowRunChange,
    envVars: Record<string, string> | undefined,
  ) {
    const publish = (event: Parameters<typeof deps.events.publish>[2]) =>
      deps.events.publish(run.tenantId, run.threadId, event);
    for (const step of plan.changed) {
      publish({
        type: "workflow.step",
        data: { workflowRunId: run.id, step: step.id, status: step.status, runId: step.runId },
      });
    }
    for (const newRun of plan.newRuns) deps.engine.enqueue(pendingRunRecord(newRun), envVars);
    if (plan.newRuns.length > 0) deps.pendingRuns.added(run.tenantId, plan.newRuns.length);
    const end = change.end;
    if (!end) return;
    const finishedAt = end.finishedAt.toISOString();
    if (end.status === "completed" && end.tokenUsage && end.cost) {
      const { output, outputJson, tokenUsage, cost } = end;
      publish({
        type: "workflow.completed",
        data: { workflowRunId: run.id, output: output ?? "", outputJson, tokenUsage, cost, finishedAt },
      });
    } else {
      const data = { workflowRunId: run.id, error: end.error ?? "failed", cost: end.cost, finishedAt };
      publish({ type: "workflow.failed", data });
    }
    for (const runId of plan.toCancel) {
      deps.engine.cancel(runId).catch((error) => context.logError("workflow step cancel failed", error));
    }
    if (end.deliveries.length > 0) deps.wakeDispatcher?.();
  }

  async function rounds(id: string, round: (id: string) => Promise<boolean>): Promise<void> {
    for (let attempt = 0; attempt < MAX_ROUNDS; attempt++) if (await round(id)) return;
    context.logError(`workflow run ${id}: gave up after ${MAX_ROUNDS} lost writes`, null);
  }

  /** Ends the run failed "cancelled", its unfinished steps cancelled; then cancels their runs. */
  async function cancelOnce(id: string): Promise<boolean> {
    const run = await store.workflows.getRunById(id);
    if (run?.status !== "pending") return true;
    const stepRuns = await context.stepRunsOf(run);
    const now = deps.clock.now();
    const toCancel: string[] = [];
    const steps = run.steps.map((step) => {
      if (step.status !== "pending" && step.status !== "running") return step;
      if (step.runId !== null && stepRuns.get(step.runId)?.status === "pending") toCancel.push(step.runId);
      return { ...step, status: "cancelled" as const, error: WORKFLOW_CANCELLED, finishedAt: now };
    });
    const ending: WorkflowEnding = {
      status: "failed",
      output: null,
      outputJson: null,
      error: WORKFLOW_CANCELLED,
    };
    const end = await endOf(run, steps, ending, stepRuns, now);
    if (!(await store.workflows.advance(id, run.revision, { steps, newRuns: [], end }))) return false;
    const changed = steps.filter((step, index) => step.status !== run.steps[index]?.status);
    published(run, { changed, newRuns: [], toCancel }, { steps, newRuns: [], end }, undefined);
    return true;
  }

  return {
    /** Brings the run up to date with its step runs (serialized per run in this process). */
    advance: (id: string): Promise<void> => serialized(id, () => rounds(id, advanceOnce)),
    cancel: (id: string): Promise<void> => serialized(id, () => rounds(id, cancelOnce)),
    isBusy: (id: string) => chains.has(id),
    /** Until every advance under way has finished. */
    async idle(): Promise<void> {
      while (chains.size > 0) await Promise.all([...chains.values()]);
    },
  };
}

/** A run whose workflow version can no longer be read fails (it cannot go on). */
function versionGone(run: WorkflowRunRecord, now: Date): AdvancePlan {
  const unfinished = (status: string) => status === "pending" || status === "running";
  const toCancel = run.steps.flatMap((step) =>
    step.status === "running" && step.runId !== null ? [step.runId] : [],
  );
  const steps = run.steps.map((step) =>
    unfinished(step.status)
      ? { ...step, status: "cancelled" as const, error: WORKFLOW_CANCELLED, finishedAt: now }
      : step,
  );
  return {
    steps,
    newRuns: [],
    startedAt: undefined,
    changed: steps.filter((step, index) => step.status !== run.steps[index]?.status),
    ending: {
      status: "failed",
      output: null,
      outputJson: null,
      error: "the workflow version no longer exists",
    },
    toCancel,
  };
}
