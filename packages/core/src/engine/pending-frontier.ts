import type { Priority } from "@promptrun/contract";
import type { PendingCursor, PendingOutlineRow, RunRecord, Store } from "../ports.ts";
import { classKey, type LocalQueue } from "./local-queue.ts";
import { CLASS_RANK } from "./scheduler.ts";

export interface PendingFrontierOptions {
  store: Store;
  queue: LocalQueue;
  /** Queued runs kept in memory at most (config.queueMemoryRuns). */
  capacity: number;
  isExecuting(runId: string): boolean;
  /** Something was loaded: the engine starts what it can. */
  onLoaded(): void;
  /** The outline read at start (the pending cap primes its counts from it). */
  onOutline?(outline: PendingOutlineRow[]): void;
  logError(message: string, error: unknown): void;
}

/** One (tenant, priority class) whose pending runs may be partly in the store only. */
interface ClassState {
  tenantId: string;
  priority: Priority;
  /** Pending runs of the class in the store and not in memory (exact once the class is loaded). */
  stored: number;
  /** The store may hold pending runs of the class past `cursor` that are not in memory. */
  overflowing: boolean;
  /** Pages start after this place; everything before it was loaded or ended. */
  cursor: PendingCursor | null;
  /** Runs sent to the store while a page was being read (the page cannot have seen them). */
  diverted: number;
  /** The earliest place of a run sent to the store that sorts before the cursor (committed late). */
  rewindTo: PendingCursor | null;
  /** The next run to load waits for an earlier run of its channel, of another class, to be loaded. */
  blocked: boolean;
}

/** Most runs read per page (one query). */
const PAGE_LIMIT = 1_000;
/** Ids of runs that ended lately: a page read before their end must not load them again. */
const RECENTLY_ENDED = 8_192;

/** A place just before every run created in the same millisecond as `run` (ids are never empty). */
const placeBefore = (run: Pick<RunRecord, "createdAt">): PendingCursor => ({
  createdAt: run.createdAt,
  id: "",
});

/** Pages are read for onsite classes first: with memory full, the room that frees goes to them. */
const byClassRank = (a: ClassState, b: ClassState) => CLASS_RANK[a.priority] - CLASS_RANK[b.priority];

const isBefore = (a: PendingCursor, b: PendingCursor) =>
  a.createdAt.getTime() < b.createdAt.getTime() ||
  (a.createdAt.getTime() === b.createdAt.getTime() && a.id < b.id);

/**
 * The bounded in-memory frontier over the stored pending runs (docs/ARCHITECTURE.md "Pending
 * runs in memory"). Each (tenant, class) keeps at most `share` queued runs in memory and all of
 * them at most `capacity`; past that, new runs stay in the store only and are paged in, oldest
 * first per class, when the class's queued runs fall to half its share. A run is loaded only
 * once the pending run before it in its channel is in memory, so channel order holds; each class
 * keeps its oldest runs in memory, so priority with aging picks as it would over everything.
 */
export function createPendingFrontier(options: PendingFrontierOptions) {
  const { store, queue, capacity } = options;
  /** A class's queued runs in memory at most: an eighth of the capacity, at least 16. */
  const share = Math.max(16, Math.floor(capacity / 8));
  const classes = new Map<string, ClassState>();
  /** Overflowing classes per tenant: while a tenant has one, all its new runs go through the store. */
  const overflowingOf = new Map<string, number>();
  const recentlyEnded = new Set<string>();
  /** Runs read from the store that wait for their channel predecessor (by its id) to be queued. */
  const waitingFor = new Map<string, Array<{ run: RunRecord; state: ClassState }>>();
  /** The runs waiting there, and the predecessor each waits for. */
  const held = new Map<string, string>();
  let blockedClasses = 0;
  let running = false;
  let refilling = false;
  let refillAgain = false;

  const stateOf = (tenantId: string, priority: Priority): ClassState => {
    const key = classKey(tenantId, priority);
    let state = classes.get(key);
    if (!state) {
      state = {
        tenantId,
        priority,
        stored: 0,
        overflowing: false,
        cursor: null,
        diverted: 0,
        rewindTo: null,
        blocked: false,
      };
      classes.set(key, state);
    }
    return state;
  };

  const inMemory = (runId: string) => queue.knows(runId) || options.isExecuting(runId);

  const wantsPage = (state: ClassState) =>
    state.overflowing &&
    !state.blocked &&
    queue.queuedIn(state.tenantId, state.priority) <= share / 2 &&
    queue.queuedTotal() < capacity;

  /** Reads the next page of one class and loads what may be loaded; true when it loaded any. */
  const loadPage = async (state: ClassState): Promise<boolean> => {
    const room = Math.min(
      share - queue.queuedIn(state.tenantId, state.priority),
      capacity - queue.queuedTotal(),
      PAGE_LIMIT,
    );
    if (room <= 0) return false;
    rewind(state);
    const divertedBefore = state.diverted;
    const rows = await store.runs.listPendingPage(state.tenantId, state.priority, state.cursor, room);
    if (!running) return false;
    let loaded = 0;
    for (const { run, channelPredecessor } of rows) {
      if (!inMemory(run.id) && !recentlyEnded.has(run.id) && !held.has(run.id)) {
        if (
          channelPredecessor !== null &&
          !inMemory(channelPredecessor) &&
          !recentlyEnded.has(channelPredecessor)
        ) {
          // Its channel's earlier run (of another class) is still in the store only: the run
          // waits beside the queue for it, so the class's later runs are not held up.
          if (held.size >= share) {
            block(state);
            break;
          }
          holdBehind(channelPredecessor, run, state);
        } else {
          loaded += addToQueue(run, state);
        }
      }
      state.cursor = { createdAt: run.createdAt, id: run.id };
    }
    // Runs committed while the page was read and sorting before its end: the next page starts there.
    rewind(state);
    if (!state.blocked && rows.length < room && state.diverted === divertedBefore) {
      setOverflowing(state, false);
      state.stored = 0;
    }
    return loaded > 0;
  };

  /** Pages classes in until none wants more; one pass at a time. */
  const refill = async () => {
    if (refilling) {
      refillAgain = true;
      return;
    }
    refilling = true;
    try {
      do {
        refillAgain = false;
        for (const state of [...classes.values()].sort(byClassRank)) {
          if (!running) return;
          if (!wantsPage(state)) continue;
          if (await loadPage(state)) {
            unblock(state.tenantId);
            options.onLoaded();
          }
          if (wantsPage(state)) refillAgain = true;
        }
      } while (refillAgain && running);
      forgetSettled();
    } catch (error) {
      options.logError("loading pending runs from the store failed; retrying when a run ends", error);
    } finally {
      refilling = false;
    }
  };

  const setOverflowing = (state: ClassState, overflowing: boolean) => {
    if (state.overflowing === overflowing) return;
    state.overflowing = overflowing;
    const count = (overflowingOf.get(state.tenantId) ?? 0) + (overflowing ? 1 : -1);
    if (count === 0) overflowingOf.delete(state.tenantId);
    else overflowingOf.set(state.tenantId, count);
  };

  const holdBehind = (predecessor: string, run: RunRecord, state: ClassState) => {
    held.set(run.id, predecessor);
    const waiting = waitingFor.get(predecessor);
    if (waiting) waiting.push({ run, state });
    else waitingFor.set(predecessor, [{ run, state }]);
  };

  const remember = (runId: string) => {
    recentlyEnded.add(runId);
    if (recentlyEnded.size > RECENTLY_ENDED) {
      const oldest = recentlyEnded.values().next().value;
      if (oldest !== undefined) recentlyEnded.delete(oldest);
    }
  };

  /** Queues the run, then the runs that waited for it (and for those, in turn); returns how many. */
  const addToQueue = (first: RunRecord, firstState: ClassState): number => {
    const next = [{ run: first, state: firstState }];
    let added = 0;
    for (let item = next.pop(); item; item = next.pop()) {
      held.delete(item.run.id);
      if (recentlyEnded.has(item.run.id)) continue;
      queue.add(item.run);
      item.state.stored = Math.max(0, item.state.stored - 1);
      added++;
      const waiting = waitingFor.get(item.run.id);
      if (waiting) {
        waitingFor.delete(item.run.id);
        next.push(...waiting);
      }
    }
    return added;
  };

  /** A page must start at or before this run again (it sorts before the cursor, or is read again). */
  const rewindBefore = (state: ClassState, run: RunRecord) => {
    const place = placeBefore(run);
    if (state.rewindTo === null || isBefore(place, state.rewindTo)) state.rewindTo = place;
  };

  const rewind = (state: ClassState) => {
    const place = state.rewindTo;
    state.rewindTo = null;
    if (place && state.cursor && isBefore(place, state.cursor)) state.cursor = place;
  };

  const block = (state: ClassState) => {
    if (!state.blocked) blockedClasses++;
    state.blocked = true;
  };

  /** An earlier run of a blocked class's channel may be in memory now (or have ended). */
  const unblock = (tenantId?: string) => {
    if (blockedClasses === 0) return;
    for (const state of classes.values()) {
      if (!state.blocked || (tenantId !== undefined && state.tenantId !== tenantId)) continue;
      state.blocked = false;
      blockedClasses--;
    }
  };

  const forgetSettled = () => {
    for (const [key, state] of classes) {
      if (state.overflowing || state.blocked || queue.queuedIn(state.tenantId, state.priority) > 0) continue;
      classes.delete(key);
    }
  };

  return {
    /** At start: the paused runs (they hold their channels), then each class's first page. */
    async load() {
      running = true;
      // The store's outline replaces whatever runs created before the start were counted as.
      classes.clear();
      overflowingOf.clear();
      const paused = await store.runs.listPaused();
      for (const run of paused) queue.add(run);
      const outline = await store.runs.pendingOutline();
      options.onOutline?.(outline);
      for (const row of outline) {
        const state = stateOf(row.tenantId, row.priority);
        state.stored += row.count;
        setOverflowing(state, true);
      }
      // The paused runs, and runs enqueued before the start, were counted: they are in memory.
      for (const run of paused) {
        const state = classes.get(classKey(run.tenantId, run.priority));
        if (state) state.stored = Math.max(0, state.stored - 1);
      }
      for (const state of classes.values()) {
        state.stored = Math.max(0, state.stored - queue.queuedIn(state.tenantId, state.priority));
      }
      await refill();
    },

    /**
     * A new run: true when it goes into memory, false when it stays in the store only and will be
     * paged in — its class is over its share or memory is full, or another class of its tenant
     * overflows (the run's channel may hold a run of that class still in the store only).
     */
    admit(run: RunRecord): boolean {
      if (
        !overflowingOf.has(run.tenantId) &&
        queue.queuedIn(run.tenantId, run.priority) < share &&
        queue.queuedTotal() < capacity
      )
        return true;
      const overflowing = stateOf(run.tenantId, run.priority);
      if (!overflowing.overflowing) {
        // Every earlier pending run of the class is in memory: pages start at this one.
        setOverflowing(overflowing, true);
        overflowing.cursor = placeBefore(run);
      } else {
        // Committed late, it may sort before the cursor: the next page starts before it.
        rewindBefore(overflowing, run);
      }
      overflowing.stored++;
      overflowing.diverted++;
      return false;
    },

    /** A run ended (or stopped) here: remembered, so a page read before its end skips it. */
    ended(runId: string) {
      // A run that ended here had its whole channel before it in memory: its waiters may go.
      const waiting = waitingFor.get(runId);
      if (waiting) {
        waitingFor.delete(runId);
        for (const { run, state } of waiting) addToQueue(run, state);
      }
      remember(runId);
      unblock();
    },

    /** A stored run is being cancelled in the store: it is never loaded from now on. */
    skip: remember,

    /** A run that was in the store only ended there (cancelled): one fewer to page in. */
    endedInStore(run: RunRecord) {
      const state = classes.get(classKey(run.tenantId, run.priority));
      if (state) state.stored = Math.max(0, state.stored - 1);
      // Runs waiting for it have another predecessor now: they are read again with it.
      for (const { run: waiter, state: waiterState } of waitingFor.get(run.id) ?? []) {
        held.delete(waiter.id);
        rewindBefore(waiterState, waiter);
      }
      waitingFor.delete(run.id);
      // It may itself have been waiting for its own predecessor.
      const predecessor = held.get(run.id);
      if (predecessor !== undefined) {
        held.delete(run.id);
        const kept = (waitingFor.get(predecessor) ?? []).filter((item) => item.run.id !== run.id);
        if (kept.length === 0) waitingFor.delete(predecessor);
        else waitingFor.set(predecessor, kept);
      }
    },

    /** Loads more if a class runs low (called after the engine started what it could). */
    refillIfLow() {
      if (!running) return;
      for (const state of classes.values()) {
        if (wantsPage(state)) {
          void refill();
          return;
        }
      }
    },

    /** Runs pending in the store and not in memory, per class (the queue depth adds them). */
    storedByClass(): Record<Priority, number> {
      const stored: Record<Priority, number> = { onsite: 0, normal: 0, low: 0 };
      for (const state of classes.values()) stored[state.priority] += state.stored;
      return stored;
    },

    stop() {
      running = false;
      classes.clear();
      overflowingOf.clear();
      waitingFor.clear();
      held.clear();
      recentlyEnded.clear();
      blockedClasses = 0;
    },
  };
}
