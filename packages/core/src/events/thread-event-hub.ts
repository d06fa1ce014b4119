import type { ThreadEvent } from "@promptrun/contract";
import type { Clock, DeliveredThreadEvent, ReplayResult, ThreadEventBus } from "../ports.ts";

type Listener = (event: DeliveredThreadEvent) => void;

/** One subscribe() call: what deliver() walks and what unsubscribe() removes. */
interface Subscriber {
  readonly listener: Listener;
  /** A resumed subscriber skips live events at or before its Last-Event-ID; null otherwise. */
  readonly resumeAfter: number | null;
}

interface BufferedEvent {
  /** Numeric form of delivered.id. */
  sequence: number;
  /** Arrival time here (ms): the buffer keeps `replayBufferSeconds` of events. */
  at: number;
  delivered: DeliveredThreadEvent;
}

interface ThreadState {
  /**
   * The thread's only subscriber, or null when it has none or several (then in `many`). Most
   * threads have one: 10k of them then hold no Set each.
   */
  single: Subscriber | null;
  many: Set<Subscriber> | null;
  /**
   * Oldest first; `head` is the first live entry (the array is compacted now and then).
   * NO_EVENTS (shared, never written) while the thread has none.
   */
  buffer: BufferedEvent[];
  head: number;
  /** Newest event dropped from this thread's buffer (events at or before it are gone). */
  lastDroppedSequence: number | null;
  /** The newest id seen when this state was created: older ids may have lived in a forgotten incarnation. */
  knownSince: number;
}

export interface ThreadEventHubOptions {
  replayBufferSeconds: number;
  clock: Clock;
  /**
   * Ids below this one may have been published before the hub heard of them (by an earlier
   * process, or elsewhere before it listened): a Last-Event-ID older than it gets `reset`.
   */
  knownSince: number;
  /** Per-thread cap on buffered events (default 10,000): bounds memory on busy threads. */
  maxBufferedEventsPerThread?: number;
  /** How often idle threads are swept (default: a quarter of the buffer age, at least 1 s). */
  pruneIntervalMs?: number;
  /** Called when a listener throws; delivery carries on regardless. */
  onListenerError?: (error: unknown) => void;
}

/**
 * The local half of every ThreadEventBus: listeners and a bounded replay buffer per (tenant,
 * thread), fed with events that already carry their id. The in-memory bus numbers events
 * itself; the Redis bus feeds what the shared stream delivers, ids assigned by Redis.
 */
export interface ThreadEventHub extends Pick<ThreadEventBus, "subscribe"> {
  /** Hands an event to the thread's listeners, then buffers it. `sequence` increases per thread. */
  deliver(tenantId: string, threadId: string, sequence: number, event: ThreadEvent): void;
  /**
   * Events before `sequence` may have been missed (a gap in the feed): buffers are emptied and a
   * Last-Event-ID older than `sequence` gets `reset` from now on.
   */
  resetBefore(sequence: number): void;
  /** Threads currently held (with buffered events or listeners): for metrics and tests. */
  threadCount(): number;
  close(): void;
}

/** Ids are decimal strings of a non-negative integer (the sequence). */
const ID_PATTERN = /^\d{1,16}$/;

export const parseEventId = (id: string): number | null => {
  if (!ID_PATTERN.test(id)) return null;
  const value = Number(id);
  return Number.isSafeInteger(value) ? value : null;
};

/** The buffer of a thread without events: shared, never pushed to. */
const NO_EVENTS: BufferedEvent[] = [];
Object.freeze(NO_EVENTS);

/** Sequences are µs-like: this many per millisecond of the window. */
const SEQUENCE_UNITS_PER_MS = 1000;
/** Clock skew between instances (and the shared Redis clock) tolerated in a Last-Event-ID. */
const FUTURE_TOLERANCE_MS = 60_000;

/** First index in [from, buffer.length) whose sequence is greater than `after` (binary search). */
const firstAfter = (buffer: BufferedEvent[], from: number, after: number): number => {
  let low = from;
  let high = buffer.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (buffer[middle]!.sequence <= after) low = middle + 1;
    else high = middle;
  }
  return low;
};

/**
 * Threads keyed by (tenant, thread); each buffer bounded by age and by count, kept even while
 * nobody listens, pruned lazily on use and by an unref'd timer; threads with neither events nor
 * listeners are forgotten. A subscriber with a Last-Event-ID never receives an event at or
 * before it, live ones included (a feed that lags another instance's may deliver them late).
 */
export function createThreadEventHub(options: ThreadEventHubOptions): ThreadEventHub {
  const { clock } = options;
  const maxAgeMs = options.replayBufferSeconds * 1000;
  const maxEvents = Math.max(1, options.maxBufferedEventsPerThread ?? 10_000);
  const threads = new Map<string, ThreadState>();
  /** Ids below this one were possibly never seen here. */
  let knownSince = options.knownSince;
  let lastSequence = knownSince;

  const keyOf = (tenantId: string, threadId: string) => `${tenantId}\u0000${threadId}`;

  const stateOf = (key: string): ThreadState => {
    let state = threads.get(key);
    if (!state) {
      state = {
        single: null,
        many: null,
        buffer: NO_EVENTS,
        head: 0,
        lastDroppedSequence: null,
        knownSince: lastSequence,
      };
      threads.set(key, state);
    }
    return state;
  };

  const dropOldest = (state: ThreadState) => {
    state.lastDroppedSequence = state.buffer[state.head]!.sequence;
    state.buffer[state.head] = undefined as unknown as BufferedEvent;
    state.head++;
  };

  const prune = (state: ThreadState, now: number) => {
    const oldestKept = now - maxAgeMs;
    while (state.head < state.buffer.length && state.buffer[state.head]!.at < oldestKept) dropOldest(state);
    while (state.buffer.length - state.head > maxEvents) dropOldest(state);
    if (state.head === state.buffer.length) {
      state.buffer = NO_EVENTS;
      state.head = 0;
    } else if (state.head > 1024 && state.head * 2 > state.buffer.length) {
      state.buffer = state.buffer.slice(state.head);
      state.head = 0;
    }
  };

  /**
   * The thread whose listeners deliver() is walking: kept even if they all leave, so the event
   * is buffered in (and a listener subscribing meanwhile joins) the state that stays in `threads`.
   */
  let delivering: ThreadState | null = null;

  const forgetIfIdle = (key: string, state: ThreadState) => {
    if (state === delivering) return;
    if (state.single === null && state.many === null && state.head === state.buffer.length)
      threads.delete(key);
  };

  const sweep = () => {
    const now = clock.now().getTime();
    for (const [key, state] of threads) {
      prune(state, now);
      forgetIfIdle(key, state);
    }
  };

  const notify = (subscriber: Subscriber, sequence: number, delivered: DeliveredThreadEvent) => {
    if (subscriber.resumeAfter !== null && sequence <= subscriber.resumeAfter) return;
    try {
      subscriber.listener(delivered);
    } catch (error) {
      options.onListenerError?.(error);
    }
  };

  /**
   * One subscriber: what deliver() walks and what subscribe() returns. `unsubscribe` is its only
   * closure (callers may call it detached).
   */
  class HubSubscription implements Subscriber {
    private subscribed = true;
    constructor(
      readonly replay: ReplayResult | null,
      readonly position: string,
      private readonly key: string,
      private readonly state: ThreadState,
      readonly listener: Listener,
      readonly resumeAfter: number | null,
    ) {}

    readonly unsubscribe = (): void => {
      if (!this.subscribed) return;
      this.subscribed = false;
      const { state } = this;
      const subscriber: Subscriber = this;
      if (state.single === subscriber) state.single = null;
      else if (state.many !== null) {
        state.many.delete(subscriber);
        if (state.many.size === 0) state.many = null;
      }
      if (threads.get(this.key) === state) forgetIfIdle(this.key, state);
    };
  }

  const sweepEveryMs = options.pruneIntervalMs ?? Math.max(1000, maxAgeMs / 4);
  const timer = setInterval(sweep, sweepEveryMs);
  timer.unref?.();

  const replayAfter = (state: ThreadState, after: number | null, now: number): ReplayResult => {
    if (after === null || after < knownSince) return { kind: "reset" };
    // An id from the future was never issued (ids follow the clock): the client must resynchronise.
    if (after > (now + FUTURE_TOLERANCE_MS) * SEQUENCE_UNITS_PER_MS) return { kind: "reset" };
    if (state.lastDroppedSequence !== null && after < state.lastDroppedSequence) return { kind: "reset" };
    // Before this state existed the thread may have had events that aged out and were forgotten
    // with it; that can only matter for an id older than the buffer window.
    if (after < state.knownSince && after < (now - maxAgeMs) * SEQUENCE_UNITS_PER_MS)
      return { kind: "reset" };
    const start = firstAfter(state.buffer, state.head, after);
    const events: DeliveredThreadEvent[] = [];
    for (let index = start; index < state.buffer.length; index++) events.push(state.buffer[index]!.delivered);
    return { kind: "replayed", events };
  };

  return {
    deliver(tenantId, threadId, sequence, event) {
      const key = keyOf(tenantId, threadId);
      const state = stateOf(key);
      const now = clock.now().getTime();
      lastSequence = Math.max(lastSequence, sequence);
      // One object shared by every listener: delivering costs a call per listener, no allocation.
      const delivered: DeliveredThreadEvent = { id: String(sequence), event };
      const outer = delivering;
      delivering = state;
      try {
        const only = state.single;
        if (only !== null) {
          notify(only, sequence, delivered);
          // Subscribed from inside that listener: a Set being walked would have reached them too.
          if (state.many !== null) {
            for (const subscriber of state.many)
              if (subscriber !== only) notify(subscriber, sequence, delivered);
          } else if (state.single !== null && state.single !== only)
            notify(state.single, sequence, delivered);
        } else if (state.many !== null) {
          for (const subscriber of state.many) notify(subscriber, sequence, delivered);
        }
      } finally {
        delivering = outer;
      }
      // Buffered after the fan-out, so a listener subscribing from inside a listener does not get it twice.
      if (state.buffer === NO_EVENTS) state.buffer = [];
      state.buffer.push({ sequence, at: now, delivered });
      prune(state, now);
    },

    subscribe(tenantId, threadId, listener, subscribeOptions) {
      const key = keyOf(tenantId, threadId);
      const state = stateOf(key);
      const now = clock.now().getTime();
      prune(state, now);
      const lastEventId = subscribeOptions?.lastEventId;
      const resumeAfter =
        lastEventId === undefined || lastEventId === null ? null : parseEventId(lastEventId);
      const replay =
        lastEventId === undefined || lastEventId === null ? null : replayAfter(state, resumeAfter, now);
      // Only a resumption filters live events: after a reset the client starts over from them.
      const subscriber = new HubSubscription(
        replay,
        // Later events get a greater sequence (ids increase across threads), so they all follow it.
        String(lastSequence),
        key,
        state,
        listener,
        resumeAfter === null || replay?.kind !== "replayed" ? null : resumeAfter,
      );
      if (state.many !== null) state.many.add(subscriber);
      else if (state.single === null) state.single = subscriber;
      else {
        state.many = new Set([state.single, subscriber]);
        state.single = null;
      }
      return subscriber;
    },

    resetBefore(sequence) {
      knownSince = Math.max(knownSince, sequence);
      lastSequence = Math.max(lastSequence, sequence);
      for (const [key, state] of threads) {
        state.buffer = NO_EVENTS;
        state.head = 0;
        state.lastDroppedSequence = null;
        state.knownSince = lastSequence;
        forgetIfIdle(key, state);
      }
    },

    threadCount: () => threads.size,

    close() {
      clearInterval(timer);
      threads.clear();
    },
  };
}
