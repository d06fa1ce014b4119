/**
 * The frontier's bookkeeping against a scripted store: which pages it asks for and what it loads
 * when the pages are stale (pending-frontier.test.ts runs it inside the engine).
 */
import { describe, expect, test } from "bun:test";
import type { PendingCursor, PendingPageRow, RunRecord, Store } from "../ports.ts";
import { createLocalQueue } from "./local-queue.ts";
import { createPendingFrontier } from "./pending-frontier.ts";

const base = 1_700_000_000_000;
const pendingRun = (index: number, overrides: Partial<RunRecord> = {}): RunRecord =>
  ({
    id: `run-${String(index).padStart(3, "0")}`,
    tenantId: "tenant-1",
    threadId: `thread-${index}`,
    channel: "default",
    priority: "normal",
    status: "pending",
    pause: null,
    createdAt: new Date(base + index),
    ...overrides,
  }) as RunRecord;

const rowsOf = (runs: RunRecord[], predecessors: Record<string, string> = {}): PendingPageRow[] =>
  runs.map((run) => ({ run, channelPredecessor: predecessors[run.id] ?? null }));

/**
 * A frontier (capacity 64: 16 per class) whose store has `stored` normal runs (and `onsite`) and
 * answers each class's pages from its script, in turn.
 */
function scripted(
  stored: number,
  pages: Array<PendingPageRow[]>,
  onsite: { stored: number; pages: Array<PendingPageRow[]> } = { stored: 0, pages: [] },
) {
  const asked: Array<{ priority: string; after: PendingCursor | null; limit: number }> = [];
  const outline = [
    { tenantId: "tenant-1", priority: "normal", count: stored },
    { tenantId: "tenant-1", priority: "onsite", count: onsite.stored },
  ].filter((row) => row.count > 0);
  const store = {
    runs: {
      listPaused: async () => [],
      pendingOutline: async () => outline,
      listPendingPage: async (
        _tenant: string,
        priority: string,
        after: PendingCursor | null,
        limit: number,
      ) => {
        asked.push({ priority, after, limit });
        return (priority === "onsite" ? onsite.pages : pages).shift() ?? [];
      },
    },
  } as unknown as Store;
  const queue = createLocalQueue({
    concurrency: 4,
    tenantConcurrency: 4,
    agingMs: 60_000,
    isExecuting: () => false,
  });
  const frontier = createPendingFrontier({
    store,
    queue,
    capacity: 64,
    isExecuting: () => false,
    onLoaded: () => {},
    logError: (message, error) => {
      throw new Error(`${message}: ${String(error)}`);
    },
  });
  /** Takes the next run off the queue and ends it, as the engine does. */
  const runNext = () => {
    const next = queue.next()!;
    frontier.ended(next.runId);
    queue.finish(next.runId);
    return next.runId;
  };
  return { queue, frontier, asked, runNext };
}

const settle = () => Bun.sleep(1);

describe("pending frontier pages", () => {
  test("a stale page listing a run that ended here meanwhile does not load it again", async () => {
    const runs = Array.from({ length: 40 }, (_, index) => pendingRun(index));
    const { queue, frontier, asked, runNext } = scripted(40, [
      rowsOf(runs.slice(0, 16)),
      // Read before run 8 ended: it is still listed.
      rowsOf(runs.slice(8, 24)),
    ]);
    await frontier.load();
    expect(queue.queuedTotal()).toBe(16);
    const ended = Array.from({ length: 9 }, runNext);
    expect(ended.at(-1)).toBe("run-008");
    frontier.refillIfLow();
    await settle();

    expect(asked).toHaveLength(2);
    expect(asked[1]?.after).toEqual({ createdAt: runs[15]!.createdAt, id: "run-015" });
    expect(queue.knows("run-008")).toBe(false);
    expect(queue.queuedTotal()).toBe(7 + 8);
  });

  test("a run created late, sorting before the cursor, moves the next page back to it", async () => {
    const runs = Array.from({ length: 16 }, (_, index) => pendingRun(index + 10));
    const { queue, frontier, asked, runNext } = scripted(30, [rowsOf(runs)]);
    await frontier.load();
    // Committed after the first page was read, created before its last run.
    const late = pendingRun(12, { id: "run-late" });
    expect(frontier.admit(late)).toBe(false);
    for (let index = 0; index < 9; index++) runNext();
    frontier.refillIfLow();
    await settle();

    expect(asked[1]?.after).toEqual({ createdAt: late.createdAt, id: "" });
    expect(queue.knows("run-late")).toBe(false);
  });

  test("a run whose channel predecessor is still in the store waits for it, and is queued right behind it", async () => {
    const earlier = pendingRun(5, { id: "earlier", threadId: "chat" });
    const normal = [earlier, ...Array.from({ length: 15 }, (_, index) => pendingRun(index + 6))];
    const onsite = pendingRun(30, { id: "onsite", priority: "onsite", threadId: "chat" });
    const { queue, frontier, asked } = scripted(17, [rowsOf(normal)], {
      stored: 1,
      pages: [rowsOf([onsite], { onsite: "earlier" })],
    });
    await frontier.load();
    // The onsite class is read first; its run waited until the normal page brought its predecessor.
    expect(asked.map((page) => page.priority)).toEqual(["onsite", "normal"]);
    expect(queue.knows("onsite")).toBe(true);
    expect(frontier.storedByClass()).toEqual({ onsite: 0, normal: 1, low: 0 });

    const started = [queue.next()!.runId, queue.next()!.runId];
    expect(started).toEqual(["earlier", "run-006"]);
    queue.finish("earlier");
    expect(queue.next()?.runId).toBe("onsite");
  });
});
