import type { Database } from "bun:sqlite";
import { PromptrunError } from "@promptrun/core";
import { isBusy, isStorageFull } from "./sqlite-errors.ts";
import type { WalSync } from "./wal-sync.ts";

interface PendingWrite {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** Epoch ms after which a busy database rejects this write instead of retrying it. */
  giveUpAt: number;
  retryWhenStorageFull: boolean;
}

export interface GroupCommitOptions {
  /** A batch is committed at once when it reaches this many writes. */
  maxBatch?: number;
  /** Called after each committed batch (tests and measurements). */
  onCommit?: (size: number) => void;
  /**
   * How long one commit attempt waits for another process's write lock (SQLite busy timeout
   * during the commit). bun:sqlite waits synchronously, so this is also the longest the event
   * loop stalls per attempt. Default 100 ms.
   */
  busyWaitMs?: number;
  /** Pause between attempts while the database stays locked (the event loop runs meanwhile). Default 50 ms. */
  busyRetryDelayMs?: number;
  /** Pause between attempts while the disk is full. Default 1 s. */
  fullRetryDelayMs?: number;
  /** Default for how long a write keeps retrying a locked database before it fails (503). Default 10 s. */
  maxBusyWaitMs?: number;
  now?: () => number;
  /**
   * With it, a batch commits with `synchronous = NORMAL` (no fsync while the event loop waits) and
   * its writes settle only once a WAL sync begun after its COMMIT has finished: still durable
   * before they resolve, but the disk flush runs off the event loop and one flush covers every
   * batch committed while the previous one ran. Without it, the connection's `synchronous = FULL`
   * makes each COMMIT durable before it returns. docs/ARCHITECTURE.md "Durable commits off the
   * event loop".
   */
  walSync?: WalSync;
}

export interface SubmitOptions {
  /** Overrides GroupCommitOptions.maxBusyWaitMs for this write. */
  maxBusyWaitMs?: number;
  /**
   * Keeps retrying (until the same deadline) when the disk is full, instead of rejecting at once:
   * for writes that must not be lost while an operator frees space.
   */
  retryWhenStorageFull?: boolean;
}

export interface GroupCommit {
  /**
   * Queues a synchronous write. Writes queued in the same event-loop turn run in ONE
   * `BEGIN IMMEDIATE` transaction (one fsync), each inside its own SAVEPOINT: a write that throws
   * is rolled back alone and rejects alone. The promise settles once the COMMIT is durable (with
   * `walSync`, after the WAL sync that follows it; a failed sync rejects with `unavailable`). While another
   * process holds the write lock, the batch is retried (without blocking the event loop between
   * attempts) until the write's busy deadline, then rejects with `unavailable`.
   */
  submit<T>(write: () => T, options?: SubmitOptions): Promise<T>;
  /** Commits whatever is queued now, synchronously (one attempt). */
  flush(): void;
  /** Flushes, then rejects every later submit. */
  close(): void;
}

const busyError = (cause: unknown) =>
  new PromptrunError("unavailable", "the database is busy; retry shortly", { cause, retryAfterSeconds: 1 });

const syncError = (cause: unknown) =>
  new PromptrunError("unavailable", "the database could not flush the write to disk; retry shortly", {
    cause,
    retryAfterSeconds: 1,
  });

const fullError = (cause: unknown) =>
  new PromptrunError("unavailable", "the database storage is full; retry later", {
    cause,
    retryAfterSeconds: 30,
  });

export const createGroupCommit = (raw: Database, options: GroupCommitOptions = {}): GroupCommit => {
  const maxBatch = options.maxBatch ?? 256;
  const busyWaitMs = options.busyWaitMs ?? 100;
  const busyRetryDelayMs = options.busyRetryDelayMs ?? 50;
  const fullRetryDelayMs = options.fullRetryDelayMs ?? 1_000;
  const maxBusyWaitMs = options.maxBusyWaitMs ?? 10_000;
  const now = options.now ?? Date.now;
  const connectionBusyTimeout =
    (raw.query("PRAGMA busy_timeout").get() as { timeout?: number } | null)?.timeout ?? 0;
  const savepoint = raw.prepare("SAVEPOINT group_commit_write");
  const release = raw.prepare("RELEASE group_commit_write");
  const rollbackTo = raw.prepare("ROLLBACK TO group_commit_write");
  const walSync = options.walSync;
  let queue: PendingWrite[] = [];
  let scheduled = false;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
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

  /** One commit attempt with a short busy wait, so a lock held elsewhere never freezes the loop for long. */
  const attempt = (batch: PendingWrite[]) => {
    if (busyWaitMs !== connectionBusyTimeout) raw.exec(`PRAGMA busy_timeout = ${busyWaitMs}`);
    // Only the group commit's transactions skip the fsync: every other write on the connection
    // keeps FULL and is durable when it returns.
    // exec, not a prepared statement: SQLite applies this pragma when it compiles it, not when it runs.
    if (walSync) raw.exec("PRAGMA synchronous = NORMAL");
    try {
      return commitBatch.immediate(batch);
    } finally {
      if (walSync) raw.exec("PRAGMA synchronous = FULL");
      if (busyWaitMs !== connectionBusyTimeout) raw.exec(`PRAGMA busy_timeout = ${connectionBusyTimeout}`);
    }
  };

  /** Committed writes waiting for a WAL sync, in commit order; `flushing` are those of the sync running now (none: no sync runs). */
  let awaitingSync: Array<{ pending: PendingWrite; value: unknown }> = [];
  let flushing: typeof awaitingSync = [];

  const settleDurable = (written: typeof awaitingSync, error?: unknown) => {
    for (const { pending, value } of written) {
      if (error === undefined) pending.resolve(value);
      else pending.reject(syncError(error));
    }
  };

  const startSync = (sync: WalSync) => {
    flushing = awaitingSync;
    awaitingSync = [];
    const written = flushing;
    sync.sync().then(
      () => afterSync(sync, written),
      (error: unknown) => afterSync(sync, written, error),
    );
  };

  const afterSync = (sync: WalSync, written: typeof awaitingSync, error?: unknown) => {
    // Settling twice (after close() synced and settled them) is harmless: a promise settles once.
    settleDurable(written, error);
    flushing = [];
    if (awaitingSync.length > 0) startSync(sync);
  };

  /** Resolves committed writes now (FULL: the COMMIT synced), or after the next WAL sync. */
  const resolveCommitted = (written: typeof awaitingSync) => {
    if (!walSync) return settleDurable(written);
    if (written.length === 0) return;
    awaitingSync.push(...written);
    if (flushing.length === 0) startSync(walSync);
  };

  const scheduleRetry = (delayMs: number) => {
    if (retryTimer !== null || closed) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      flushWith(true);
    }, delayMs);
  };

  /** Commits the rest on a later turn, so a burst of writes does not hold the event loop. */
  const scheduleFlush = () => {
    if (scheduled || closed) return;
    scheduled = true;
    setImmediate(() => {
      if (retryTimer === null) flushWith(true, 1);
      else scheduled = false;
    });
  };

  const flushWith = (retryWhenBusy: boolean, maxBatches = Number.POSITIVE_INFINITY): void => {
    scheduled = false;
    for (let batches = 0; queue.length > 0; batches++) {
      if (batches >= maxBatches) {
        scheduleFlush();
        return;
      }
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      let outcomes: ReturnType<typeof commitBatch>;
      try {
        outcomes = attempt(batch);
      } catch (error) {
        const busy = isBusy(error);
        const full = !busy && isStorageFull(error);
        if (!busy && !full) {
          for (const pending of batch) pending.reject(error);
          continue;
        }
        const at = now();
        const keeps = (pending: PendingWrite) =>
          retryWhenBusy && pending.giveUpAt > at && (busy || pending.retryWhenStorageFull);
        const waiting = batch.filter(keeps);
        for (const pending of batch) {
          if (!waiting.includes(pending)) pending.reject(busy ? busyError(error) : fullError(error));
        }
        if (waiting.length > 0) {
          // Nothing of the batch was applied (BEGIN IMMEDIATE failed or it rolled back): retry it first.
          queue = [...waiting, ...queue];
          scheduleRetry(busy ? busyRetryDelayMs : fullRetryDelayMs);
          return;
        }
        continue;
      }
      options.onCommit?.(batch.length);
      const retries: PendingWrite[] = [];
      const committed: typeof awaitingSync = [];
      batch.forEach((pending, index) => {
        const outcome = outcomes[index];
        if (outcome?.ok) committed.push({ pending, value: outcome.value });
        else if (!isStorageFull(outcome?.error)) pending.reject(outcome?.error);
        // A write that hit the size limit was rolled back alone (its savepoint): it may try again.
        else if (retryWhenBusy && pending.retryWhenStorageFull && pending.giveUpAt > now())
          retries.push(pending);
        else pending.reject(fullError(outcome?.error));
      });
      resolveCommitted(committed);
      if (retries.length > 0) {
        queue = [...retries, ...queue];
        scheduleRetry(fullRetryDelayMs);
        return;
      }
    }
  };

  return {
    submit<T>(write: () => T, submitOptions?: SubmitOptions): Promise<T> {
      if (closed) return Promise.reject(new PromptrunError("unavailable", "the store is closed"));
      return new Promise<T>((resolve, reject) => {
        queue.push({
          write,
          resolve: resolve as (value: unknown) => void,
          reject,
          giveUpAt: now() + (submitOptions?.maxBusyWaitMs ?? maxBusyWaitMs),
          retryWhenStorageFull: submitOptions?.retryWhenStorageFull === true,
        });
        // While waiting out a lock, new writes join the retry instead of hitting the lock again.
        if (retryTimer !== null) return;
        if (queue.length >= maxBatch) flushWith(true, 1);
        else scheduleFlush();
      });
    },
    flush: () => flushWith(true),
    close() {
      if (retryTimer !== null) clearTimeout(retryTimer);
      retryTimer = null;
      flushWith(false);
      closed = true;
      if (walSync && (flushing.length > 0 || awaitingSync.length > 0)) {
        // Nothing committed may be left unacknowledged: one blocking sync covers them all.
        const written = [...flushing, ...awaitingSync];
        awaitingSync = [];
        try {
          walSync.syncNow();
          settleDurable(written);
        } catch (error) {
          settleDurable(written, error);
        }
      }
    },
  };
};
