import { PromptrunError } from "@promptrun/core";

/** The result of one queued write in a committed batch. */
export type WriteOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

export interface GroupCommitOptions<W, T> {
  /**
   * Writes one batch (in one transaction) and reports each write's outcome, in order. If it
   * throws, every write of the batch rejects with that error.
   */
  commit(batch: W[]): Promise<WriteOutcome<T>[]>;
  /** Most writes in one batch (default 256). */
  maxBatch?: number;
  /** Batches committing at once, each on its own connection (default 4). */
  maxInFlight?: number;
  /** Called after each committed batch with its size (tests and measurements). */
  onCommit?: (size: number) => void;
}

export interface GroupCommit<W, T> {
  /** Queues a write; writes queued in the same event-loop turn share one batch. */
  submit(write: W): Promise<T>;
  /** Waits for everything queued to be committed, then rejects every later submit. */
  close(): Promise<void>;
}

interface Pending<W, T> {
  write: W;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit over a connection pool: one commit (one WAL flush) per batch instead of per write.
 * While `maxInFlight` batches are committing, new writes wait and form the next, larger batch.
 */
export const createGroupCommit = <W, T>(options: GroupCommitOptions<W, T>): GroupCommit<W, T> => {
  const maxBatch = options.maxBatch ?? 256;
  const maxInFlight = options.maxInFlight ?? 4;
  let queue: Pending<W, T>[] = [];
  let inFlight = 0;
  let scheduled = false;
  let closed = false;
  let idle: (() => void) | null = null;
  let closing: Promise<void> | null = null;

  const settle = (batch: Pending<W, T>[], outcomes: WriteOutcome<T>[]): void => {
    batch.forEach((pending, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok) pending.resolve(outcome.value);
      else pending.reject(outcome ? outcome.error : new Error("the batch reported no outcome for a write"));
    });
  };

  const commitBatch = async (batch: Pending<W, T>[]): Promise<void> => {
    try {
      settle(batch, await options.commit(batch.map((pending) => pending.write)));
      options.onCommit?.(batch.length);
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    } finally {
      inFlight--;
      drain();
    }
  };

  const drain = (): void => {
    scheduled = false;
    while (queue.length > 0 && inFlight < maxInFlight) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      inFlight++;
      void commitBatch(batch);
    }
    if (queue.length === 0 && inFlight === 0) idle?.();
  };

  return {
    submit(write) {
      if (closed) return Promise.reject(new PromptrunError("unavailable", "the store is closed"));
      return new Promise<T>((resolve, reject) => {
        queue.push({ write, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(drain);
        }
      });
    },
    close() {
      closed = true;
      closing ??=
        queue.length === 0 && inFlight === 0
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              idle = resolve;
            });
      return closing;
    },
  };
};
