import {
  type Cost,
  createWorkflowRunRequestSchema,
  type PromptRun,
  type ThreadEvent,
  type TokenUsage,
  type WorkflowRun,
  type WorkflowRunStep,
  type WorkflowStepStatus,
} from "@promptrun/contract";
import type { FakeRunScript } from "./fake-promptrun-server.ts";

/** One step of a scripted workflow run, executed in order (the fake has no graph). */
export interface FakeWorkflowStepScript {
  id: string;
  /** A prompt step runs `script` as a prompt run on the channel named `id` (the default). */
  script?: FakeRunScript;
  /** A retrieve step completes at once with this text (and no run). */
  retrieve?: string;
  /** The step is skipped (as a false `when`). */
  skip?: boolean;
  /** A failure of this step does not fail the workflow. */
  continueOnError?: boolean;
}

/** What a fake workflow run does: its steps, in order. */
export interface FakeWorkflowScript {
  steps: FakeWorkflowStepScript[];
}

/** A created workflow run as the fake saw it. */
export interface FakeWorkflowRunRequest {
  slug: string;
  version: string;
  body: Record<string, unknown>;
  idempotencyKey: string | null;
}

/** What the workflow part of the fake needs from the rest of it. */
export interface FakeWorkflowDeps {
  publish(thread: string, event: ThreadEvent): string;
  later(ms: number): Promise<void>;
  /** Starts a prompt run (already stored and executing) for a step. */
  startRun(
    fields: Pick<PromptRun, "thread" | "channel" | "priority" | "environment" | "metadata" | "workflowRun">,
    slug: string,
    script: FakeRunScript,
  ): PromptRun;
  /** Cancels a pending prompt run (it ends failed "cancelled"). */
  cancelRun(run: PromptRun): void;
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers });
const error = (status: number, message: string, code: string) => json({ error: message, code }, status);
const now = () => new Date().toISOString();

/** Adds two values of the same shape number by number (usage and cost sums). */
const addNumbers = <T>(left: T, right: T): T => {
  if (typeof left === "number") return (left + (right as number)) as T;
  const entries = Object.entries(left as object).map(([key, value]) => [
    key,
    typeof value === "number" || (value && typeof value === "object")
      ? addNumbers(value, (right as Record<string, unknown>)[key])
      : value,
  ]);
  return Object.fromEntries(entries) as T;
};
const zeroUsage: TokenUsage = { input: 0, inputCached: 0, output: 0, reasoning: 0, total: 0 };
const zeroBlock = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };
const zeroCost: Cost = { success: zeroBlock, retries: zeroBlock, total: 0 };

const isEnded = (status: WorkflowStepStatus) => status !== "pending" && status !== "running";

/**
 * Workflow runs for the contract fake: `POST /api/v1/workflows/{slug}/{version}/runs`,
 * `GET /api/v1/workflowruns[/{id}]`, `POST /api/v1/workflowruns/{id}/cancel`, with the
 * `workflow.*` events on the run's thread beside its steps' own `run.*` events.
 */
export function createFakeWorkflowRuns(
  deps: FakeWorkflowDeps,
  scriptFor: (request: FakeWorkflowRunRequest) => FakeWorkflowScript,
) {
  const workflowRuns = new Map<string, WorkflowRun>();
  const stepRuns = new Map<string, PromptRun>();
  const replies = new Map<string, { id: string; thread: string }>();
  const createdWorkflowRuns: FakeWorkflowRunRequest[] = [];

  const setStep = (workflowRun: WorkflowRun, id: string, change: Partial<WorkflowRunStep>) => {
    const step = workflowRun.steps.find((each) => each.id === id)!;
    Object.assign(step, change);
    deps.publish(workflowRun.thread, {
      type: "workflow.step",
      data: { workflowRunId: workflowRun.id, step: id, status: step.status, runId: step.runId },
    });
  };

  const runsOf = (workflowRun: WorkflowRun) =>
    workflowRun.steps.flatMap((step) => (step.runId ? [stepRuns.get(step.runId)!] : []));

  function fail(workflowRun: WorkflowRun, message: string): void {
    for (const step of workflowRun.steps)
      if (!isEnded(step.status)) setStep(workflowRun, step.id, { status: "cancelled", finishedAt: now() });
    const cost = runsOf(workflowRun).reduce((sum, run) => addNumbers(sum, run.cost ?? zeroCost), zeroCost);
    const finishedAt = now();
    Object.assign(workflowRun, { status: "failed", phase: null, error: message, cost, finishedAt });
    deps.publish(workflowRun.thread, {
      type: "workflow.failed",
      data: { workflowRunId: workflowRun.id, error: message, cost, finishedAt },
    });
  }

  function complete(workflowRun: WorkflowRun): void {
    const last = workflowRun.steps.findLast((step) => step.status === "completed");
    const runs = runsOf(workflowRun);
    const tokenUsage = runs.reduce((sum, run) => addNumbers(sum, run.tokenUsage ?? zeroUsage), zeroUsage);
    const cost = runs.reduce((sum, run) => addNumbers(sum, run.cost ?? zeroCost), zeroCost);
    const output = last?.output ?? "";
    const outputJson = last?.outputJson ?? null;
    const finishedAt = now();
    Object.assign(workflowRun, {
      status: "completed",
      phase: null,
      output,
      outputJson,
      tokenUsage,
      cost,
      finishedAt,
    });
    deps.publish(workflowRun.thread, {
      type: "workflow.completed",
      data: { workflowRunId: workflowRun.id, output, outputJson, tokenUsage, cost, finishedAt },
    });
  }

  /** Runs a prompt step to its end (following its pauses into the workflow's phase); false if it failed. */
  async function runPromptStep(workflowRun: WorkflowRun, step: FakeWorkflowStepScript): Promise<boolean> {
    const run = deps.startRun(
      {
        thread: workflowRun.thread,
        channel: step.id,
        priority: workflowRun.priority,
        environment: workflowRun.environment,
        metadata: workflowRun.metadata,
        workflowRun: { id: workflowRun.id, step: step.id },
      },
      workflowRun.workflow.slug,
      step.script ?? { tokens: ["hello"] },
    );
    stepRuns.set(run.id, run);
    setStep(workflowRun, step.id, { status: "running", runId: run.id, startedAt: now() });
    while (run.status === "pending" && workflowRun.status === "pending") {
      workflowRun.phase = run.phase === "requires_action" ? "requires_action" : "running";
      await deps.later(5);
    }
    if (workflowRun.status !== "pending") return true;
    workflowRun.phase = "running";
    const ended = { finishedAt: now(), output: run.output, outputJson: run.outputJson, error: run.error };
    setStep(workflowRun, step.id, { ...ended, status: run.status === "completed" ? "completed" : "failed" });
    return run.status === "completed" || step.continueOnError === true;
  }

  async function execute(workflowRun: WorkflowRun, script: FakeWorkflowScript): Promise<void> {
    await deps.later(5);
    for (const step of script.steps) {
      if (workflowRun.status !== "pending") return;
      Object.assign(workflowRun, { phase: "running", startedAt: workflowRun.startedAt ?? now() });
      if (step.skip) setStep(workflowRun, step.id, { status: "skipped" });
      else if (step.retrieve !== undefined) {
        const times = { startedAt: now(), finishedAt: now() };
        const outputJson = { chunks: [] };
        setStep(workflowRun, step.id, { ...times, status: "completed", output: step.retrieve, outputJson });
      } else if (!(await runPromptStep(workflowRun, step))) {
        const failed = workflowRun.steps.find((each) => each.id === step.id)!;
        if (workflowRun.status === "pending") fail(workflowRun, `step '${step.id}' failed: ${failed.error}`);
        return;
      }
    }
    if (workflowRun.status === "pending") complete(workflowRun);
  }

  function create(request: FakeWorkflowRunRequest, body: Record<string, unknown>): WorkflowRun {
    const script = scriptFor(request);
    const step = (each: FakeWorkflowStepScript): WorkflowRunStep => ({
      id: each.id,
      kind: each.retrieve === undefined ? "prompt" : "retrieve",
      status: "pending",
      runId: null,
      output: null,
      outputJson: null,
      error: null,
      startedAt: null,
      finishedAt: null,
    });
    const workflowRun: WorkflowRun = {
      id: crypto.randomUUID(),
      status: "pending",
      phase: "queued",
      createdAt: now(),
      startedAt: null,
      finishedAt: null,
      output: null,
      outputJson: null,
      error: null,
      tokenUsage: null,
      cost: null,
      thread: typeof body.thread === "string" ? body.thread : crypto.randomUUID(),
      workflow: { slug: request.slug, version: Number(request.version) || 1, id: crypto.randomUUID() },
      priority: (body.priority as WorkflowRun["priority"] | undefined) ?? "normal",
      environment: typeof body.environment === "string" ? body.environment : "production",
      metadata: (body.metadata as WorkflowRun["metadata"] | undefined) ?? {},
      inputs: (body.inputs as Record<string, unknown> | undefined) ?? {},
      steps: script.steps.map(step),
    };
    workflowRuns.set(workflowRun.id, workflowRun);
    const { slug, version } = workflowRun.workflow;
    deps.publish(workflowRun.thread, {
      type: "workflow.started",
      data: { workflowRunId: workflowRun.id, workflow: { slug, version } },
    });
    void execute(workflowRun, script);
    return workflowRun;
  }

  async function createRoute(request: Request, slug: string, version: string): Promise<Response> {
    const parsed = createWorkflowRunRequestSchema.safeParse(await request.json().catch(() => undefined));
    if (!parsed.success) return error(400, parsed.error.issues[0]?.message ?? "invalid body", "invalid");
    const idempotencyKey = request.headers.get("idempotency-key");
    const replay = idempotencyKey === null ? undefined : replies.get(idempotencyKey);
    if (replay) return json(replay, 202);
    const runRequest = { slug, version, body: parsed.data, idempotencyKey };
    createdWorkflowRuns.push(runRequest);
    const { id, thread } = create(runRequest, parsed.data);
    if (idempotencyKey !== null) replies.set(idempotencyKey, { id, thread });
    return json({ id, thread }, 202, { location: `/api/v1/workflowruns/${id}` });
  }

  function cancelRoute(workflowRun: WorkflowRun): Response {
    if (workflowRun.status !== "pending") return error(409, "workflow run already ended", "conflict");
    const running = runsOf(workflowRun).filter((run) => run.status === "pending");
    fail(workflowRun, "cancelled");
    for (const run of running) deps.cancelRun(run);
    return json(workflowRun);
  }

  function listRoute(url: URL): Response {
    const query = url.searchParams;
    const matches = (workflowRun: WorkflowRun) =>
      (!query.has("workflow") || workflowRun.workflow.slug === query.get("workflow")) &&
      (!query.has("status") || workflowRun.status === query.get("status")) &&
      (!query.has("thread") || workflowRun.thread === query.get("thread"));
    const items = [...workflowRuns.values()].filter(matches).reverse();
    return json({ items: items.slice(0, Number(query.get("limit") ?? 50)), nextCursor: null });
  }

  /** Answers a workflow-run request; null when `path` is none of the workflow-run routes. */
  async function route(request: Request, url: URL): Promise<Response | null> {
    const path = url.pathname;
    const createMatch = path.match(/^\/api\/v1\/workflows\/([^/]+)\/([^/]+)\/runs$/);
    if (createMatch && request.method === "POST")
      return createRoute(request, decodeURIComponent(createMatch[1]!), decodeURIComponent(createMatch[2]!));
    if (path === "/api/v1/workflowruns" && request.method === "GET") return listRoute(url);
    const runMatch = path.match(/^\/api\/v1\/workflowruns\/([^/]+)(\/cancel)?$/);
    if (!runMatch) return null;
    const workflowRun = workflowRuns.get(runMatch[1]!);
    if (!workflowRun) return error(404, "workflow run not found", "not_found");
    if (runMatch[2] && request.method === "POST") return cancelRoute(workflowRun);
    if (!runMatch[2] && request.method === "GET") return json(workflowRun);
    return error(405, "method not allowed", "method_not_allowed");
  }

  return { route, createdWorkflowRuns };
}
