import { describe, expect, test } from "bun:test";
import type { RunRecord } from "../ports.ts";
import { createLocalQueue } from "./local-queue.ts";

const pendingRun = (id: string, overrides: Partial<RunRecord> = {}): RunRecord =>
  ({
    id,
    tenantId: "tenant-1",
    threadId: `thread-${id}`,
    channel: "default",
    priority: "normal",
    status: "pending",
    createdAt: new Date(),
    ...overrides,
  }) as RunRecord;

function queueWith(executing: Set<string> = new Set()) {
  return createLocalQueue({
    concurrency: 4,
    tenantConcurrency: 4,
    agingMs: 60_000,
    isExecuting: (runId) => executing.has(runId),
  });
}

describe("local queue", () => {
  test("hands out a run with the envVars it was enqueued with, once", () => {
    const queue = queueWith();
    queue.add(pendingRun("a"), { KEY: "value" });
    const next = queue.next();
    expect(next?.launchable?.run.id).toBe("a");
    expect(next?.launchable?.envVars).toEqual({ KEY: "value" });
    expect(queue.isQueued("a")).toBe(false);
    expect(queue.next()).toBeNull();
  });

  test("ignores runs that ended or execute here", () => {
    const queue = queueWith(new Set(["running"]));
    queue.add(pendingRun("done", { status: "completed" }));
    queue.add(pendingRun("running"));
    expect(queue.isQueued("done")).toBe(false);
    expect(queue.isQueued("running")).toBe(false);
    expect(queue.stats().queued.normal).toBe(0);
  });

  test("remove takes a queued run out with its envVars; a second remove finds nothing", () => {
    const queue = queueWith();
    queue.add(pendingRun("a"), { KEY: "value" });
    expect(queue.remove("a")?.id).toBe("a");
    expect(queue.remove("a")).toBeNull();
    // Queued again without envVars: the earlier plaintext is gone, not handed to the new launch.
    queue.add(pendingRun("a"));
    expect(queue.next()?.launchable?.envVars).toBeUndefined();
  });

  test("the polled part follows the latest frontier; runs created here stay", () => {
    const queue = queueWith();
    queue.add(pendingRun("local"));
    queue.replacePolled([pendingRun("p1"), pendingRun("p2")]);
    expect(["local", "p1", "p2"].map((id) => queue.isQueued(id))).toEqual([true, true, true]);
    queue.replacePolled([pendingRun("p2"), pendingRun("p3")]);
    expect(["local", "p1", "p2", "p3"].map((id) => queue.isQueued(id))).toEqual([true, false, true, true]);
    queue.clear();
    expect(["local", "p2", "p3"].some((id) => queue.isQueued(id))).toBe(false);
  });
});
