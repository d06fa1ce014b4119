/**
 * Workflow runs (docs/WORKFLOWS.md "Runs"): the service (create, get, list, cancel) and the
 * advancer's life: every pending run advanced at start, an advance whenever a step run ends here,
 * and a slow sweep for step runs that ended on an instance that died before advancing.
 */

import { isUuid, type Page, type WorkflowRun } from "@promptrun/contract";
import { conflict, notFound } from "../../errors.ts";
import type { RunRecord } from "../../ports.ts";
import { clampPage, countFitting, MAX_PAGE_BYTES } from "../../services/page.ts";
import { createPendingRunCounter, type PendingRunCounter } from "../../services/pending-run-counter.ts";
import { uuidv7 } from "../../services/uuidv7.ts";
import type { WorkflowRunService } from "../../services.ts";
import type { WorkflowRunListFilter, WorkflowRunRecord } from "../ports.ts";
import { createWorkflowRunCreate } from "./create-workflow-run.ts";
import { toWorkflowRun } from "./to-workflow-run.ts";
import { createWorkflowAdvancer } from "./workflow-advancer.ts";
import { createWorkflowRunContext, type WorkflowRunsDeps } from "./workflow-run-context.ts";

/** How often pending workflow runs are checked against their step runs (a crash elsewhere). */
const DEFAULT_SWEEP_MS = 15_000;
/** Orphaned step runs cancelled per store read. */
const ORPHAN_BATCH = 100;

export interface WorkflowRuns {
  service: WorkflowRunService;
  /** Advances every pending workflow run, cancels orphaned step runs, starts the sweep. */
  start(): Promise<void>;
  /** Stops the sweep and waits for the advances under way. */
  stop(): Promise<void>;
  /** The engine ended a run: a workflow step's run advances its workflow run. */
  onRunEnded(run: RunRecord): void;
}

export function createWorkflowRuns(
  options: Omit<WorkflowRunsDeps, "newId" | "pendingRuns"> & {
    newId?: () => string;
    sweepIntervalMs?: number;
    /** Default: a counter of its own (the composition root shares the run service's). */
    pendingRuns?: PendingRunCounter;
  },
): WorkflowRuns {
  const newId = options.newId ?? (() => uuidv7(options.clock.now().getTime()));
  const pendingRuns =
    options.pendingRuns ??
    createPendingRunCounter({
      countPending: (tenantId) => options.store.runs.countPending(tenantId),
      clock: options.clock,
    });
  const context = createWorkflowRunContext({ ...options, newId, pendingRuns });
  const { store, events } = options;
  const advancer = createWorkflowAdvancer(context);
  let state: "idle" | "running" | "stopped" = "idle";
  let sweepTimer: ReturnType<typeof setInterval> | null = null;
  let sweeping = false;

  const advance = (id: string) => {
    advancer.advance(id).catch((error) => context.logError(`workflow run ${id}: advance failed`, error));
  };

  const create = createWorkflowRunCreate(context, (run) => {
    events.publish(run.tenantId, run.threadId, {
      type: "workflow.started",
      data: { workflowRunId: run.id, workflow: { slug: run.workflowSlug, version: run.workflowVersion } },
    });
    advance(run.id);
  });

  const requireRun = async (tenantId: string, id: string): Promise<WorkflowRunRecord> => {
    const run = isUuid(id) ? await store.workflows.getRun(tenantId, id.toLowerCase()) : null;
    if (!run) throw notFound(`workflow run '${id}' not found`);
    return run;
  };
  const present = async (run: WorkflowRunRecord): Promise<WorkflowRun> =>
    toWorkflowRun(run, await context.graphOf(run), await context.stepRunsOf(run));

  const cancelOrphans = async () => {
    for (;;) {
      const orphans = await store.workflows.listOrphanedStepRuns(ORPHAN_BATCH);
      const ended = await Promise.all(orphans.map((runId) => options.engine.cancel(runId)));
      if (orphans.length < ORPHAN_BATCH || !ended.some(Boolean)) return;
    }
  };

  const sweep = async () => {
    if (sweeping || state !== "running") return;
    sweeping = true;
    try {
      for (const id of await store.workflows.listPendingRunIds()) if (!advancer.isBusy(id)) advance(id);
      await cancelOrphans();
    } catch (error) {
      context.logError("workflow sweep failed", error);
    } finally {
      sweeping = false;
    }
  };

  const service: WorkflowRunService = {
    create,
    async get(tenantId, id) {
      return present(await requireRun(tenantId, id));
    },
    async list(tenantId, filter, page) {
      const storeFilter: WorkflowRunListFilter = {
        ...(filter.workflow !== undefined ? { slug: filter.workflow } : {}),
        ...(filter.version !== undefined ? { version: filter.version } : {}),
        ...(filter.status !== undefined ? { status: filter.status } : {}),
        ...(filter.thread !== undefined ? { threadId: filter.thread.toLowerCase() } : {}),
        ...(filter.environment !== undefined ? { environment: filter.environment } : {}),
        ...(filter.createdAfter !== undefined ? { createdAfter: new Date(filter.createdAfter) } : {}),
        ...(filter.createdBefore !== undefined ? { createdBefore: new Date(filter.createdBefore) } : {}),
      };
      const { cursor, limit } = clampPage(page);
      return boundedWorkflowPage(
        (pageLimit) => store.workflows.listRuns(tenantId, storeFilter, { cursor, limit: pageLimit }),
        present,
        limit,
      );
    },
    async cancel(tenantId, id) {
      const run = await requireRun(tenantId, id);
      if (run.status !== "pending") throw conflict("workflow run has already ended");
      await advancer.cancel(run.id);
      return present(await requireRun(tenantId, run.id));
    },
  };

  return {
    service,
    async start() {
      if (state !== "idle") return;
      state = "running";
      for (const id of await store.workflows.listPendingRunIds()) advance(id);
      await cancelOrphans().catch((error) => context.logError("cancelling orphaned step runs failed", error));
      sweepTimer = setInterval(() => void sweep(), options.sweepIntervalMs ?? DEFAULT_SWEEP_MS);
      sweepTimer.unref?.();
    },
    async stop() {
      state = "stopped";
      if (sweepTimer) clearInterval(sweepTimer);
      await advancer.idle();
    },
    onRunEnded(run) {
      if (run.workflowRun && state !== "stopped") advance(run.workflowRun.id);
    },
  };
}

/** A page of workflow runs bounded in bytes too (as services/page.ts boundedPage, with an async mapping). */
async function boundedWorkflowPage(
  fetch: (limit: number) => Promise<Page<WorkflowRunRecord>>,
  present: (run: WorkflowRunRecord) => Promise<WorkflowRun>,
  limit: number,
): Promise<Page<WorkflowRun>> {
  let result = await fetch(limit);
  for (;;) {
    const items = await Promise.all(result.items.map(present));
    const fitting = countFitting(items, MAX_PAGE_BYTES);
    if (fitting >= items.length) return { items, nextCursor: result.nextCursor };
    result = await fetch(fitting);
  }
}
