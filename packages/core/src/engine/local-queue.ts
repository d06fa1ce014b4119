import type { Priority } from "@promptrun/contract";
import type { RunRecord } from "../ports.ts";
import type { EngineMetrics } from "../services.ts";
import { RunScheduler } from "./scheduler.ts";

export interface LocalQueueOptions {
  concurrency: number;
  tenantConcurrency: number;
  agingMs: number;
  /** A run executing here is never queued again (a poll may offer it while it runs). */
  isExecuting(runId: string): boolean;
  metrics?: EngineMetrics | undefined;
  /** Pending runs kept in the store only, per class: the depth gauge counts them too. */
  storedDepth?: () => Record<Priority, number> | undefined;
}

/** Queue depths per class, summed. */
export const addDepths = (
  a: Record<Priority, number>,
  b: Record<Priority, number>,
): Record<Priority, number> => ({
  onsite: a.onsite + b.onsite,
  normal: a.normal + b.normal,
  low: a.low + b.low,
});

/** One key per (tenant, priority class). */
export const classKey = (tenantId: string, priority: Priority): string => `${priority}:${tenantId}`;

/** A run taken off the queue to execute, with the plaintext envVars it was enqueued with. */
export interface LaunchableRun {
  run: RunRecord;
  envVars: Record<string, string> | undefined;
}

/**
 * The runs this instance knows of and has not started: the scheduler's order (priority, channel
 * order, concurrency limits), the queued records, and plaintext run envVars from enqueue, which
 * stay in memory only and are dropped when the run leaves the queue unlaunched.
 */
export function createLocalQueue(options: LocalQueueOptions) {
  const scheduler = new RunScheduler({
    concurrency: options.concurrency,
    tenantConcurrency: options.tenantConcurrency,
    agingMs: options.agingMs,
  });
  const queuedRuns = new Map<string, RunRecord>();
  /** Queued runs per tenant and class (the frontier's budgets, pending-frontier.ts). */
  const queuedPerClass = new Map<string, number>();
  const countQueued = (run: RunRecord, change: 1 | -1) => {
    const key = classKey(run.tenantId, run.priority);
    const count = (queuedPerClass.get(key) ?? 0) + change;
    if (count === 0) queuedPerClass.delete(key);
    else queuedPerClass.set(key, count);
  };
  const envVarsByRun = new Map<string, Record<string, string>>();
  /** Queued because a poll offered them (not created here): each poll's frontier replaces them. */
  const polled = new Set<string>();

  // Reported once per event-loop turn: a burst of creates would otherwise set the gauge per run.
  let depthReportPending = false;
  const reportDepth = () => {
    if (!options.metrics || depthReportPending) return;
    depthReportPending = true;
    setImmediate(() => {
      depthReportPending = false;
      const { queued } = scheduler.stats();
      const stored = options.storedDepth?.();
      options.metrics?.queueDepth(stored ? addDepths(queued, stored) : queued);
    });
  };

  const add = (run: RunRecord, envVars?: Record<string, string>) => {
    if (run.status !== "pending" || options.isExecuting(run.id)) return;
    const scheduled = {
      runId: run.id,
      tenantId: run.tenantId,
      threadId: run.threadId,
      channel: run.channel,
      priority: run.priority,
      enqueuedAt: run.createdAt.getTime(),
    };
    // A paused run waits for its tool outputs: it holds its channel, not a slot.
    if (run.pause) {
      scheduler.holdPaused(scheduled);
      return;
    }
    const added = scheduler.enqueue(scheduled);
    if (!added) return;
    queuedRuns.set(run.id, run);
    countQueued(run, 1);
    if (envVars) envVarsByRun.set(run.id, envVars);
  };

  return {
    add,
    isQueued: (runId: string) => scheduler.isQueued(runId),
    /** Queued, executing or paused here. */
    knows: (runId: string) =>
      scheduler.isQueued(runId) || scheduler.isExecuting(runId) || scheduler.isPaused(runId),
    /** Runs of this tenant and class queued here (not executing, not paused). */
    queuedIn: (tenantId: string, priority: Priority) => queuedPerClass.get(classKey(tenantId, priority)) ?? 0,
    /** Runs queued here, in all. */
    queuedTotal: () => queuedRuns.size,

    /** The next run the limits allow, taken off the queue (its slot is held until finish()). */
    next(): { runId: string; launchable: LaunchableRun | null } | null {
      const next = scheduler.next();
      if (!next) return null;
      const { runId } = next;
      const run = queuedRuns.get(runId);
      const envVars = envVarsByRun.get(runId);
      if (run) countQueued(run, -1);
      queuedRuns.delete(runId);
      envVarsByRun.delete(runId);
      polled.delete(runId);
      return { runId, launchable: run ? { run, envVars } : null };
    },

    /** A launched run has ended here: its slot is free. */
    finish: (runId: string) => scheduler.finish(runId),

    /** A launched run paused for tool outputs: its slot is free, its channel waits for it. */
    pause: (runId: string) => scheduler.pause(runId),

    /** A paused run continues or has ended: its channel is free of it (a continuing run is added again). */
    unpause: (runId: string) => scheduler.unpause(runId),

    /** Takes a queued run out (cancel); null when it was not queued. */
    remove(runId: string): RunRecord | null {
      if (!scheduler.isQueued(runId)) return null;
      const run = queuedRuns.get(runId) ?? null;
      scheduler.remove(runId);
      if (run) countQueued(run, -1);
      queuedRuns.delete(runId);
      envVarsByRun.delete(runId);
      polled.delete(runId);
      reportDepth();
      return run;
    },

    /** Keeps the polled part of the queue equal to the shared queue's latest frontier. */
    replacePolled(runs: RunRecord[]) {
      const offered = new Set(runs.map((run) => run.id));
      for (const runId of [...polled]) {
        if (offered.has(runId)) continue;
        polled.delete(runId);
        const run = queuedRuns.get(runId);
        if (scheduler.remove(runId) && run) {
          countQueued(run, -1);
          queuedRuns.delete(runId);
        }
      }
      for (const run of runs) {
        if (scheduler.isQueued(run.id) || options.isExecuting(run.id)) continue;
        add(run);
        if (scheduler.isQueued(run.id)) polled.add(run.id);
      }
    },

    clear() {
      scheduler.clearQueued();
      queuedRuns.clear();
      queuedPerClass.clear();
      envVarsByRun.clear();
      polled.clear();
      reportDepth();
    },

    reportDepth,
    stats: () => scheduler.stats(),
  };
}

export type LocalQueue = ReturnType<typeof createLocalQueue>;
