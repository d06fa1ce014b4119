import type { Database } from "bun:sqlite";
import { PromptrunError } from "@promptrun/core";

interface PendingWrite {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitOptions {
  /** A batch is committed at once when it reaches this many writes. */
  maxBatch?: number;
  /** Called after each committed batch (tests and measurements). */
  onCommit?: (size: number) => void;
}

export interface GroupCommit {
  /**
   * Queues a synchronous write. Writes queued in the same event-loop turn run in ONE
   * `BEGIN IMMEDIATE` transaction (one fsync), each inside its own SAVEPOINT: a write that throws
   * is rolled back alone and rejects alone. The promise settles after the COMMIT.
   */
  submit<T>(write: () => T): Promise<T>;
  /** Commits whatever is queued now, synchronously. */
  flush(): void;
  /** Flushes, then rejects every later submit. */
  close(): void;
}

export const createGroupCommit = (raw: Database, options: GroupCommitOptions = {}): GroupCommit => {
  const maxBatch = options.maxBatch ?? 256;
  const savepoint = raw.prepare("SAVEPOINT group_commit_write");
  const release = raw.prepare("RELEASE group_commit_write");
  const rollbackTo = raw.prepare("ROLLBACK TO group_commit_write");
  let queue: PendingWrite[] = [];
  let scheduled = false;
  let closed = false;

  const commitBatch = raw.transaction((batch: PendingWrite[]) => {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    for (const pending of batch) {
      savepoint.run();
      try {
        const value = pending.write();
        release.run();
        outcomes.push({ ok: true, value });
      } catch (error) {
        // If SQLite already rolled the whole transaction back, this throws and fails the batch.
        rollbackTo.run();
        release.run();
        outcomes.push({ ok: false, error });
      }
    }
    return outcomes;
  });

  const flush = (): void => {
    scheduled = false;
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      let outcomes: ReturnType<typeof commitBatch>;
      try {
        outcomes = commitBatch.immediate(batch);
      } catch (error) {
        for (const pending of batch) pending.reject(error);
        continue;
      }
      options.onCommit?.(batch.length);
      batch.forEach((pending, index) => {
        const outcome = outcomes[index];
        if (outcome?.ok) pending.resolve(outcome.value);
        else pending.reject(outcome?.error);
      });
    }
  };

  return {
    submit<T>(write: () => T): Promise<T> {
      if (closed) return Promise.reject(new PromptrunError("unavailable", "the store is closed"));
      return new Promise<T>((resolve, reject) => {
        queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
        if (queue.length >= maxBatch) flush();
        else if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    flush,
    close() {
      flush();
      closed = true;
    },
  };
};
