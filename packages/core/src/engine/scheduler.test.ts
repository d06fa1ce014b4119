import { describe, expect, test } from "bun:test";
import type { Priority } from "@promptrun/contract";
import { RunScheduler, reservedSlotsFor, type ScheduledRun } from "./scheduler.ts";

const AGING_MS = 30_000;
const T0 = Date.parse("2030-01-01T00:00:00Z");

let counter = 0;
const run = (overrides: Partial<ScheduledRun> = {}): ScheduledRun => {
  counter++;
  return {
    runId: `run-${counter}`,
    tenantId: "tenant-a",
    threadId: `thread-${counter}`,
    channel: "default",
    priority: "normal",
    enqueuedAt: T0,
    ...overrides,
  };
};

const scheduler = (concurrency = 100, tenantConcurrency = 100) =>
  new RunScheduler({ concurrency, tenantConcurrency, agingMs: AGING_MS });

/** Takes runs until none may start, finishing each right away. */
const drainIds = (queue: RunScheduler): string[] => {
  const order: string[] = [];
  for (let next = queue.next(); next; next = queue.next()) {
    order.push(next.runId);
    queue.finish(next.runId);
  }
  return order;
};

describe("RunScheduler", () => {
  test("onsite before normal before low at equal age", () => {
    const queue = scheduler();
    const low = run({ priority: "low" });
    const normal = run({ priority: "normal" });
    const onsite = run({ priority: "onsite" });
    for (const item of [low, normal, onsite]) queue.enqueue(item);
    expect(drainIds(queue)).toEqual([onsite.runId, normal.runId, low.runId]);
  });

  test("FIFO within a class", () => {
    const queue = scheduler();
    const runs = [0, 1, 2, 3].map((offset) => run({ enqueuedAt: T0 + offset }));
    for (const item of [...runs].reverse()) queue.enqueue(item);
    expect(drainIds(queue)).toEqual(runs.map((item) => item.runId));
    const sameTime = [run(), run(), run()];
    for (const item of sameTime) queue.enqueue(item);
    expect(drainIds(queue)).toEqual(sameTime.map((item) => item.runId));
  });

  test("aging: a low run that waited longer than two classes beats fresh onsite work", () => {
    const queue = scheduler();
    const oldLow = run({ priority: "low", enqueuedAt: T0 });
    const freshOnsite = run({ priority: "onsite", enqueuedAt: T0 + 2 * AGING_MS + 1 });
    const recentOnsite = run({ priority: "onsite", enqueuedAt: T0 + 2 * AGING_MS - 1 });
    const oldNormal = run({ priority: "normal", enqueuedAt: T0 + AGING_MS / 2 });
    for (const item of [freshOnsite, oldLow, recentOnsite, oldNormal]) queue.enqueue(item);
    expect(drainIds(queue)).toEqual([oldNormal.runId, recentOnsite.runId, oldLow.runId, freshOnsite.runId]);
  });

  test("strict order per channel: the next run waits until the previous one ended", () => {
    const queue = scheduler();
    const first = run({ threadId: "shared", channel: "chat", enqueuedAt: T0 });
    const second = run({ threadId: "shared", channel: "chat", enqueuedAt: T0 + 1, priority: "onsite" });
    queue.enqueue(first);
    queue.enqueue(second);
    expect(queue.next()?.runId).toBe(first.runId);
    expect(queue.next()).toBeNull(); // second waits although it has a better class
    queue.finish(first.runId);
    expect(queue.next()?.runId).toBe(second.runId);
  });

  test("a run created earlier but enqueued later still goes first in its channel", () => {
    const queue = scheduler();
    const later = run({ threadId: "shared", enqueuedAt: T0 + 10 });
    const earlier = run({ threadId: "shared", enqueuedAt: T0 });
    queue.enqueue(later);
    queue.enqueue(earlier);
    expect(drainIds(queue)).toEqual([earlier.runId, later.runId]);
  });

  test("different channels and threads run in parallel", () => {
    const queue = scheduler();
    const a = run({ threadId: "shared", channel: "a" });
    const b = run({ threadId: "shared", channel: "b" });
    const other = run({ threadId: "other", channel: "a" });
    for (const item of [a, b, other]) queue.enqueue(item);
    const started = [queue.next(), queue.next(), queue.next()].map((item) => item?.runId);
    expect(started.sort()).toEqual([a.runId, b.runId, other.runId].sort());
    expect(queue.stats().executing).toBe(3);
  });

  test("global limit", () => {
    const queue = scheduler(2);
    for (let index = 0; index < 5; index++) queue.enqueue(run({ tenantId: `tenant-${index}` }));
    const first = queue.next()!;
    queue.next();
    expect(queue.next()).toBeNull();
    queue.finish(first.runId);
    expect(queue.next()).not.toBeNull();
  });

  test("a tenant at its limit is parked and does not block other tenants", () => {
    const queue = scheduler(10, 2);
    const busyTenant = Array.from({ length: 5 }, (_, index) =>
      run({ tenantId: "busy", enqueuedAt: T0 + index }),
    );
    const otherTenant = run({ tenantId: "quiet", enqueuedAt: T0 + 100, priority: "low" });
    for (const item of busyTenant) queue.enqueue(item);
    queue.enqueue(otherTenant);
    const started = [queue.next(), queue.next(), queue.next()].map((item) => item?.runId);
    expect(started).toEqual([busyTenant[0]!.runId, busyTenant[1]!.runId, otherTenant.runId]);
    expect(queue.next()).toBeNull();
    queue.finish(busyTenant[0]!.runId);
    expect(queue.next()?.runId).toBe(busyTenant[2]!.runId);
  });

  test("fair share: four saturating tenants leave the reserve free, and a fifth tenant starts at once", () => {
    const queue = scheduler(32, 8);
    for (const tenant of ["a", "b", "c", "d"])
      for (let index = 0; index < 20; index++)
        queue.enqueue(run({ tenantId: tenant, enqueuedAt: T0 + index }));
    const started: ScheduledRun[] = [];
    for (let next = queue.next(); next; next = queue.next()) started.push(next);
    // 32 slots, one in eight kept for tenants with nothing executing.
    expect(started.length).toBe(28);
    expect(reservedSlotsFor(32, 8)).toBe(4);
    for (const tenant of ["a", "b", "c", "d"])
      expect(started.filter((item) => item.tenantId === tenant).length).toBe(7);

    // Newcomers, even with a later, lower-priority run, take the reserve.
    const newcomers = ["e", "f", "g", "h", "i"].map((tenant) =>
      run({ tenantId: tenant, enqueuedAt: T0 + 1_000, priority: "low" }),
    );
    for (const item of newcomers) queue.enqueue(item);
    expect([queue.next(), queue.next(), queue.next(), queue.next()].map((item) => item?.runId)).toEqual(
      newcomers.slice(0, 4).map((item) => item.runId),
    );
    expect(queue.next()).toBeNull();
    // The pool is full: the slot a busy tenant frees goes to the waiting newcomer, not back to it.
    queue.finish(started[0]!.runId);
    expect(queue.next()?.runId).toBe(newcomers[4]!.runId);
    expect(queue.next()).toBeNull();
  });

  test("fair share keeps priority order while the pool has room, and a lone tenant still reaches its limit", () => {
    const queue = scheduler(32, 8);
    const busyFirst = run({ tenantId: "a", enqueuedAt: T0, priority: "onsite" });
    queue.enqueue(busyFirst);
    expect(queue.next()?.runId).toBe(busyFirst.runId);
    const busyOnsite = run({ tenantId: "a", enqueuedAt: T0 + 1, priority: "onsite" });
    const idleLow = run({ tenantId: "b", enqueuedAt: T0, priority: "low" });
    queue.enqueue(idleLow);
    queue.enqueue(busyOnsite);
    expect([queue.next()?.runId, queue.next()?.runId]).toEqual([busyOnsite.runId, idleLow.runId]);

    const alone = scheduler(8, 8);
    for (let index = 0; index < 10; index++) alone.enqueue(run({ tenantId: "solo" }));
    let count = 0;
    while (alone.next()) count++;
    expect(count).toBe(8);
    expect(reservedSlotsFor(8, 8)).toBe(0);
    expect(reservedSlotsFor(1, 1)).toBe(0);
  });

  test("remove drops queued runs (head or middle) and keeps channel order", () => {
    const queue = scheduler();
    const items = [0, 1, 2, 3].map((offset) => run({ threadId: "shared", enqueuedAt: T0 + offset }));
    for (const item of items) queue.enqueue(item);
    expect(queue.remove(items[0]!.runId)).toBe(true);
    expect(queue.remove(items[2]!.runId)).toBe(true);
    expect(queue.remove(items[2]!.runId)).toBe(false);
    expect(queue.stats().queued.normal).toBe(2);
    expect(drainIds(queue)).toEqual([items[1]!.runId, items[3]!.runId]);
  });

  test("an executing run is not removable and cannot be enqueued twice", () => {
    const queue = scheduler();
    const item = run();
    queue.enqueue(item);
    expect(queue.enqueue(item)).toBe(false);
    queue.next();
    expect(queue.remove(item.runId)).toBe(false);
    expect(queue.enqueue(item)).toBe(false);
    expect(queue.isExecuting(item.runId)).toBe(true);
  });

  test("stats count queued runs per class, including those waiting behind their channel", () => {
    const queue = scheduler();
    const priorities: Priority[] = ["onsite", "low", "low", "normal"];
    for (const priority of priorities) queue.enqueue(run({ threadId: "shared", priority }));
    expect(queue.stats()).toEqual({ queued: { onsite: 1, normal: 1, low: 2 }, executing: 0 });
    queue.next();
    expect(queue.stats()).toEqual({ queued: { onsite: 0, normal: 1, low: 2 }, executing: 1 });
  });

  test("100k queued runs over 1k tenants enqueue and drain quickly, in priority order", () => {
    const queue = new RunScheduler({
      concurrency: 1_000_000,
      tenantConcurrency: 1_000_000,
      agingMs: AGING_MS,
    });
    const priorities: Priority[] = ["low", "normal", "onsite"];
    const started = performance.now();
    for (let index = 0; index < 100_000; index++) {
      queue.enqueue({
        runId: `bulk-${index}`,
        tenantId: `tenant-${index % 1000}`,
        threadId: `thread-${index}`,
        channel: "default",
        priority: priorities[index % 3]!,
        enqueuedAt: T0 + (index % 5000),
      });
    }
    let previousKey = Number.NEGATIVE_INFINITY;
    let outOfOrder = 0;
    let taken = 0;
    for (let next = queue.next(); next; next = queue.next()) {
      const key = next.enqueuedAt + { onsite: 0, normal: 1, low: 2 }[next.priority] * AGING_MS;
      if (key < previousKey) outOfOrder++;
      previousKey = key;
      taken++;
      queue.finish(next.runId);
    }
    const elapsedMs = performance.now() - started;
    expect(taken).toBe(100_000);
    expect(outOfOrder).toBe(0);
    expect(queue.stats()).toEqual({ queued: { onsite: 0, normal: 0, low: 0 }, executing: 0 });
    // Typically ~1 s here; a scan over the backlog per take would take minutes.
    expect(elapsedMs).toBeLessThan(5_000);
  });
});
