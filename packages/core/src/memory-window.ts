/**
 * Thread memory is read bounded: the newest whole exchanges of a channel, at most
 * `maxMessages` messages and `maxBytes` UTF-8 bytes of content, returned oldest first. Each
 * store reads only the sizes of the newest `maxMessages + 1` rows (its messages index, newest
 * first), picks the window with `memoryWindowStart`, then reads the contents from there on.
 */
export interface MemoryBound {
  maxMessages: number;
  maxBytes: number;
}

/** 1,000 messages / 2 MiB: far above a model's context, far below what slows a run's start. */
export const DEFAULT_MEMORY_BOUND: MemoryBound = { maxMessages: 1_000, maxBytes: 2 * 1024 * 1024 };

export interface MemoryRowSize {
  /** Insertion order within the channel. */
  seq: number;
  /** The run whose exchange the row belongs to (an exchange's rows are contiguous). */
  runId: string;
  /** UTF-8 bytes of its content. */
  bytes: number;
}

/**
 * The smallest `seq` of the window, or null when not even the newest exchange fits.
 * `newestFirst` holds at most `maxMessages + 1` rows: an exchange cut off by that limit cannot
 * fit anyway, since counting only its fetched rows already exceeds `maxMessages`.
 */
export function memoryWindowStart(newestFirst: readonly MemoryRowSize[], bound: MemoryBound): number | null {
  let start: number | null = null;
  let messages = 0;
  let bytes = 0;
  let index = 0;
  while (index < newestFirst.length) {
    const runId = newestFirst[index]!.runId;
    let groupMessages = 0;
    let groupBytes = 0;
    let groupStart = newestFirst[index]!.seq;
    while (index < newestFirst.length && newestFirst[index]!.runId === runId) {
      groupMessages++;
      groupBytes += newestFirst[index]!.bytes;
      groupStart = newestFirst[index]!.seq;
      index++;
    }
    if (messages + groupMessages > bound.maxMessages || bytes + groupBytes > bound.maxBytes) break;
    messages += groupMessages;
    bytes += groupBytes;
    start = groupStart;
  }
  return start;
}
