/** Something holding bytes for a waiting reader, written out once per event-loop turn. */
export interface Flushable {
  /** Hands what is queued to the reader. */
  flush(): void;
}

let pending = new Set<Flushable>();
let scheduled = false;

const concat = (chunks: Uint8Array[]): Uint8Array => {
  let length = 0;
  for (const chunk of chunks) length += chunk.byteLength;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
};

const sameChunks = (a: Uint8Array[], b: Uint8Array[]): boolean => {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
};

/**
 * Subscribers of one thread usually hold the very same encoded events in the same order: their
 * batch is concatenated once per event-loop turn and the same bytes go to every socket.
 */
let joinedThisTurn = new Map<Uint8Array, { chunks: Uint8Array[]; joined: Uint8Array }>();
let joinCacheClearScheduled = false;
const clearJoinCache = () => {
  joinCacheClearScheduled = false;
  joinedThisTurn = new Map();
};

/**
 * Concatenates queued chunks, sharing the result with any other subscriber holding the same ones.
 * The array is kept until the end of the turn: the caller must not change it afterwards.
 */
export function joinChunks(chunks: Uint8Array[]): Uint8Array {
  const first = chunks[0];
  if (first === undefined) return new Uint8Array(0);
  if (chunks.length === 1) return first;
  const known = joinedThisTurn.get(first);
  if (known && sameChunks(known.chunks, chunks)) return known.joined;
  const joined = concat(chunks);
  joinedThisTurn.set(first, { chunks, joined });
  if (!joinCacheClearScheduled) {
    joinCacheClearScheduled = true;
    setImmediate(clearJoinCache);
  }
  return joined;
}

const flushAll = () => {
  scheduled = false;
  // Swapped rather than copied: a flush that schedules another lands in the next turn's set.
  const due = pending;
  pending = new Set();
  for (const target of due) target.flush();
};

/**
 * Past this many subscribers waiting at once (a thread broadcasting to many), writes wait for the
 * end of the event-loop turn; below it they go out as soon as the publishing task is done.
 */
const WRITE_AT_ONCE_MAX_TARGETS = 64;

const flushOrDefer = () => {
  // `scheduled` stays set while deferred: what is published meanwhile joins the same flush.
  if (pending.size > WRITE_AT_ONCE_MAX_TARGETS) setImmediate(flushAll);
  else flushAll();
};

/**
 * Writes what a task published once that task is done (its microtasks): a token then reaches a few
 * subscribers without waiting for the rest of the event-loop turn. When many subscribers are
 * waiting (one thread broadcasting), the write is deferred to the end of the turn instead, so
 * every event published during the turn reaches each socket in one write: on this machine a
 * socket write costs the same for one event or five (bench finding 3).
 */
export function scheduleFlush(target: Flushable): void {
  pending.add(target);
  if (scheduled) return;
  scheduled = true;
  queueMicrotask(flushOrDefer);
}
