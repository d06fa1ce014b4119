import { conflict } from "../../errors.ts";
import { DEFAULT_MEMORY_BOUND, knownTotal, type MemoryRowSize, memoryWindowOf } from "../../memory-window.ts";
import type {
  IdempotencyRecord,
  NewRun,
  PendingOutlineRow,
  RunRecord,
  RunStore,
  StoredMessage,
  WebhookDeliveryRecord,
} from "../../ports.ts";
import { pendingRunRecord } from "../../run-record.ts";

const isSeqKey = (value: unknown): value is [number] =>
  Array.isArray(value) && value.length === 1 && Number.isSafeInteger(value[0]);

import { copy, isTimeAndId, paginate } from "./paging.ts";
import { type MemoryReferences, requireReference } from "./references.ts";
import { matchesRunFilter, usageOf } from "./run-list.ts";

export interface MemoryRunStore extends RunStore {
  has(id: string): boolean;
  /** Throws what inserting the run would throw, writing nothing (a workflow advance checks first). */
  checkInsert(run: NewRun): void;
  /** Synchronous insert (and its thread), so the workflow store can write step runs in its "transaction". */
  insert(run: NewRun): void;
  /** Creates the thread if new (a workflow run's thread exists before its first step run). */
  ensureThread(tenantId: string, threadId: string, createdAt: Date): void;
  /** Pending runs that are workflow steps: id, workflow run id, createdAt. */
  pendingStepRuns(): Array<{ id: string; workflowRunId: string; createdAt: Date }>;
}

interface ThreadRow {
  id: string;
  createdAt: Date;
  messages: StoredMessage[];
}

type ChannelOrder = Pick<RunRecord, "createdAt" | "id">;
const compareOldestFirst = (a: ChannelOrder, b: ChannelOrder) =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

interface Lease {
  owner: string;
  until: Date;
}

const PRIORITIES = ["onsite", "normal", "low"] as const;

/**
 * In-memory RunStore. Each method runs without awaiting in between, so, like one SQLite
 * transaction, it is atomic with respect to other calls.
 */
export function createMemoryRunStore(
  references: MemoryReferences,
  onDeliveries: (deliveries: WebhookDeliveryRecord[]) => void,
): MemoryRunStore {
  const runs = new Map<string, RunRecord>();
  /** key: `${tenantId}/${threadId}` (threads of different tenants never collide) */
  const threads = new Map<string, ThreadRow>();
  /** key: `${tenantId}/${idempotencyKey}` */
  const idempotency = new Map<string, IdempotencyRecord>();
  const threadKey = (tenantId: string, threadId: string) => `${tenantId}/${threadId}`;
  /** Coordination state beside the records (like the lease columns of the SQL stores). */
  const leases = new Map<string, Lease>();
  const cancelRequests = new Set<string>();

  const leaseFree = (id: string, now: Date) => {
    const lease = leases.get(id);
    return lease === undefined || lease.until.getTime() <= now.getTime();
  };
  const isChannelHead = (run: RunRecord) => {
    for (const other of runs.values()) {
      if (
        other.status === "pending" &&
        other.tenantId === run.tenantId &&
        other.threadId === run.threadId &&
        other.channel === run.channel &&
        compareOldestFirst(other, run) < 0
      )
        return false;
    }
    return true;
  };
  /** Takes the key unless a fresh record holds it (create and resume share this). */
  const claimIdempotencyKey = (record: IdempotencyRecord, expiredBefore: Date | undefined) => {
    const key = `${record.tenantId}/${record.key}`;
    const existing = idempotency.get(key);
    const expired = existing && expiredBefore && existing.createdAt < expiredBefore;
    if (existing && !expired) throw conflict("Idempotency-Key already used");
    idempotency.set(key, copy(record));
  };
  const liveLeasesOf = (tenantId: string, except: string, now: Date) => {
    let count = 0;
    for (const [id, lease] of leases) {
      const run = runs.get(id);
      if (id !== except && run?.tenantId === tenantId && run.status === "pending" && lease.until > now)
        count++;
    }
    return count;
  };

  const checkInsert = (run: NewRun) => {
    if (runs.has(run.id)) throw conflict(`run ${run.id} already exists`);
    requireReference(
      references.tenant(run.tenantId) && references.promptVersion(run.promptVersionId),
      `run ${run.id}`,
    );
  };
  const ensureThread = (tenantId: string, threadId: string, createdAt: Date) => {
    const key = threadKey(tenantId, threadId);
    if (!threads.has(key)) threads.set(key, { id: threadId, createdAt, messages: [] });
  };
  const insert = (run: NewRun) => {
    checkInsert(run);
    ensureThread(run.tenantId, run.threadId, run.createdAt);
    runs.set(run.id, pendingRunRecord(copy(run)));
  };

  return {
    has: (id) => runs.has(id),
    checkInsert,
    insert,
    ensureThread,
    pendingStepRuns: () =>
      [...runs.values()]
        .filter((run) => run.status === "pending" && run.workflowRun)
        .map((run) => ({ id: run.id, workflowRunId: run.workflowRun!.id, createdAt: run.createdAt })),
    async create(run, idempotencyRecord, options) {
      checkInsert(run);
      if (idempotencyRecord) claimIdempotencyKey(idempotencyRecord, options?.idempotencyExpiredBefore);
      insert(run);
    },
    async get(tenantId, id) {
      const run = runs.get(id);
      return run && run.tenantId === tenantId ? copy(run) : null;
    },
    async getById(id) {
      const run = runs.get(id);
      return run ? copy(run) : null;
    },
    async list(tenantId, filter, page) {
      // Newest first.
      const sorted = [...runs.values()]
        .filter((run) => run.tenantId === tenantId && matchesRunFilter(run, filter))
        .sort((a, b) => compareOldestFirst(b, a));
      const result = paginate(
        sorted,
        page,
        (run): [number, string] => [run.createdAt.getTime(), run.id],
        (run, [time, id]) =>
          run.createdAt.getTime() < time || (run.createdAt.getTime() === time && run.id < id),
        isTimeAndId,
      );
      return { items: result.items.map(copy), nextCursor: result.nextCursor };
    },
    async usage(tenantId, query) {
      return usageOf(
        [...runs.values()].filter((run) => run.tenantId === tenantId),
        query,
        references.promptModel,
      );
    },
    async listPending() {
      return [...runs.values()]
        .filter((run) => run.status === "pending")
        .sort(compareOldestFirst)
        .map(copy);
    },
    async pendingOutline() {
      const counts = new Map<string, PendingOutlineRow>();
      for (const run of runs.values()) {
        if (run.status !== "pending") continue;
        const key = `${run.tenantId}\u0000${run.priority}`;
        const row = counts.get(key) ?? { tenantId: run.tenantId, priority: run.priority, count: 0 };
        row.count++;
        counts.set(key, row);
      }
      return [...counts.values()];
    },
    async listPaused() {
      return [...runs.values()]
        .filter((run) => run.status === "pending" && run.pause !== null)
        .sort(compareOldestFirst)
        .map(copy);
    },
    async listPendingPage(tenantId, priority, after, limit) {
      const pendingOfTenant = [...runs.values()]
        .filter((run) => run.status === "pending" && run.tenantId === tenantId)
        .sort(compareOldestFirst);
      const predecessorOf = (run: RunRecord) =>
        pendingOfTenant.findLast(
          (earlier) =>
            earlier.threadId === run.threadId &&
            earlier.channel === run.channel &&
            compareOldestFirst(earlier, run) < 0,
        )?.id ?? null;
      return pendingOfTenant
        .filter(
          (run) =>
            run.priority === priority &&
            run.pause === null &&
            (after === null || compareOldestFirst(run, after) > 0),
        )
        .slice(0, limit)
        .map((run) => ({ run: copy(run), channelPredecessor: predecessorOf(run) }));
    },
    async markStarted(id, at, attempts) {
      const run = runs.get(id);
      if (run?.status !== "pending") return;
      // startedAt keeps the first start; attempts counts every one.
      run.startedAt ??= at;
      run.attempts = attempts;
    },
    async complete(id, completion) {
      const run = runs.get(id);
      if (run?.status !== "pending") return false;
      onDeliveries(completion.deliveries);
      leases.delete(id);
      run.status = "completed";
      run.output = completion.output;
      run.outputJson = copy(completion.outputJson ?? null);
      run.finishReason = completion.finishReason ?? null;
      run.memoryWindow = copy(completion.memoryWindow ?? null);
      run.tokenUsage = copy(completion.tokenUsage);
      run.cost = copy(completion.cost);
      run.finishedAt = completion.finishedAt;
      run.error = null;
      run.encryptedEnvVars = null;
      // Steps absent keep what saveSteps stored, as in the SQL stores.
      if (completion.steps !== undefined) run.steps = copy(completion.steps);
      if (completion.retrieval !== undefined) run.retrieval = copy(completion.retrieval);
      run.citations = copy(completion.citations ?? []);
      run.pause = null;
      const thread = threads.get(threadKey(run.tenantId, run.threadId));
      for (const message of completion.memory) {
        thread?.messages.push({
          role: message.role,
          content: message.content,
          ...(message.parts ? { parts: copy(message.parts) } : {}),
          runId: run.id,
          channel: run.channel,
          createdAt: completion.finishedAt,
        });
      }
      return true;
    },
    async fail(id, failure) {
      const run = runs.get(id);
      if (run?.status !== "pending") return false;
      // An expiring pause fails only a run still paused there (a resume may have won).
      if (failure.pausedStep !== undefined && run.pause?.step !== failure.pausedStep) return false;
      onDeliveries(failure.deliveries);
      leases.delete(id);
      run.status = "failed";
      run.error = failure.error;
      run.finishReason = failure.finishReason ?? null;
      run.memoryWindow = copy(failure.memoryWindow ?? null);
      run.cost = failure.cost ? copy(failure.cost) : null;
      run.finishedAt = failure.finishedAt;
      run.output = null;
      run.tokenUsage = null;
      run.encryptedEnvVars = null;
      if (failure.steps !== undefined) run.steps = copy(failure.steps);
      if (failure.retrieval !== undefined) run.retrieval = copy(failure.retrieval);
      run.pause = null;
      return true;
    },
    async saveSteps(id, steps, retrieval) {
      const run = runs.get(id);
      if (run?.status !== "pending") return false;
      run.steps = copy(steps);
      if (retrieval !== undefined) run.retrieval = copy(retrieval);
      return true;
    },
    async pause(id, paused) {
      const run = runs.get(id);
      if (run?.status !== "pending" || run.pause !== null) return false;
      onDeliveries(paused.deliveries);
      // A paused run holds no slot.
      leases.delete(id);
      run.steps = copy(paused.steps);
      if (paused.retrieval !== undefined) run.retrieval = copy(paused.retrieval);
      run.pause = copy(paused.pause);
      return true;
    },
    async resume(id, resumption, idempotencyRecord, options) {
      const run = runs.get(id);
      if (run?.status !== "pending" || run.pause?.step !== resumption.step) return false;
      // Before any change: a taken key leaves the run paused.
      if (idempotencyRecord) claimIdempotencyKey(idempotencyRecord, options?.idempotencyExpiredBefore);
      run.steps = copy(resumption.steps);
      run.pause = null;
      return true;
    },
    async listExpiredPauses(now, limit) {
      return [...runs.values()]
        .filter((run) => run.status === "pending" && run.pause !== null && run.pause.expiresAt <= now)
        .sort(
          (a, b) =>
            a.pause!.expiresAt.getTime() - b.pause!.expiresAt.getTime() ||
            (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
        )
        .slice(0, limit)
        .map(copy);
    },
    async memory(tenantId, threadId, channel, bound = DEFAULT_MEMORY_BOUND) {
      const thread = threads.get(threadKey(tenantId, threadId));
      if (!thread) return { messages: [], dropped: 0 };
      // Newest first, at most maxMessages + 1 rows (what the SQL stores read through their index).
      const newestFirst: Array<MemoryRowSize & { message: StoredMessage }> = [];
      for (let index = thread.messages.length - 1; index >= 0; index--) {
        const message = thread.messages[index]!;
        if (message.channel !== channel) continue;
        newestFirst.push({
          seq: index,
          runId: message.runId,
          bytes: Buffer.byteLength(message.content),
          partsBytes: message.parts ? Buffer.byteLength(JSON.stringify(message.parts)) : 0,
          message,
        });
        if (newestFirst.length > bound.maxMessages) break;
      }
      const { start } = memoryWindowOf(newestFirst, bound);
      const messages =
        start === null
          ? []
          : newestFirst
              .filter((row) => row.seq >= start)
              .reverse()
              .map(({ message }) => ({
                role: message.role,
                content: message.content,
                ...(message.parts ? { parts: copy(message.parts) } : {}),
              }));
      const total =
        knownTotal(newestFirst, bound) ??
        thread.messages.filter((message) => message.channel === channel).length;
      return { messages, dropped: total - messages.length };
    },
    async messagesBeforeRun(run, limit) {
      const thread = threads.get(threadKey(run.tenantId, run.threadId));
      const ofChannel = (thread?.messages ?? []).filter((message) => message.channel === run.channel);
      // Where the run's exchange starts: the first message of the run or of a later run of the channel.
      const atOrAfterRun = (message: StoredMessage) => {
        const writer = message.runId === null ? undefined : runs.get(message.runId);
        return writer !== undefined && compareOldestFirst(writer, run) >= 0;
      };
      const start = ofChannel.findIndex(atOrAfterRun);
      const before = start === -1 ? ofChannel : ofChannel.slice(0, start);
      return before.slice(Math.max(0, before.length - limit)).map(({ role, content, parts }) => ({
        role,
        content,
        ...(parts ? { parts: copy(parts) } : {}),
      }));
    },
    async getThread(tenantId, threadId) {
      const thread = threads.get(threadKey(tenantId, threadId));
      return thread ? copy(thread) : null;
    },
    async listMessages(tenantId, threadId, channel, page) {
      const thread = threads.get(threadKey(tenantId, threadId));
      const ofChannel = (thread?.messages ?? [])
        .map((message, seq) => ({ seq, message }))
        .filter(({ message }) => message.channel === channel);
      const { items, nextCursor } = paginate(
        ofChannel,
        page,
        ({ seq }) => [seq],
        ({ seq }, [after]) => seq > (after ?? -1),
        isSeqKey,
      );
      return { items: items.map(({ message }) => copy(message)), nextCursor };
    },
    async importMessages(tenantId, threadId, channel, imported, now) {
      const key = threadKey(tenantId, threadId);
      if (!threads.has(key)) threads.set(key, { id: threadId, createdAt: now, messages: [] });
      const thread = threads.get(key)!;
      const known = new Set(
        thread.messages.filter((message) => message.channel === channel).map((message) => message.externalId),
      );
      let added = 0;
      for (const message of imported) {
        if (message.externalId !== undefined && known.has(message.externalId)) continue;
        if (message.externalId !== undefined) known.add(message.externalId);
        thread.messages.push({
          role: message.role,
          content: message.content,
          runId: null,
          ...(message.externalId !== undefined ? { externalId: message.externalId } : {}),
          channel,
          createdAt: message.createdAt ?? now,
        });
        added++;
      }
      return { imported: added, skipped: imported.length - added };
    },
    async findIdempotency(tenantId, key, notBefore) {
      const record = idempotency.get(`${tenantId}/${key}`);
      return record && record.createdAt >= notBefore ? copy(record) : null;
    },
    async countPending(tenantId) {
      let count = 0;
      for (const run of runs.values()) if (run.tenantId === tenantId && run.status === "pending") count++;
      return count;
    },
    async updateEncryptedEnvVars(id, encryptedEnvVars) {
      const run = runs.get(id);
      // Only pending runs keep envVars; an ended run's were erased and stay so.
      if (run && run.status === "pending") run.encryptedEnvVars = encryptedEnvVars;
    },
    async claim(id, owner, leaseUntil, now, options) {
      const run = runs.get(id);
      if (run?.status !== "pending") return false;
      if (!leaseFree(id, now) && leases.get(id)?.owner !== owner) return false;
      // A paused run waits for its caller; only a cancel takes it (to end it).
      if (!options?.ignoreChannelOrder && run.pause !== null) return false;
      if (!options?.ignoreChannelOrder && !isChannelHead(run)) return false;
      if (options?.tenantLimit !== undefined && liveLeasesOf(run.tenantId, id, now) >= options.tenantLimit)
        return false;
      leases.set(id, { owner, until: leaseUntil });
      return true;
    },
    async renewLeases(owner, ids, leaseUntil) {
      const renewed: string[] = [];
      for (const id of ids) {
        const lease = leases.get(id);
        if (lease?.owner !== owner || runs.get(id)?.status !== "pending") continue;
        lease.until = leaseUntil;
        renewed.push(id);
      }
      return { renewed, cancelRequested: renewed.filter((id) => cancelRequests.has(id)) };
    },
    async releaseLease(id, owner) {
      if (leases.get(id)?.owner === owner) leases.delete(id);
    },
    async listClaimable(now, limit, options) {
      const tenantLimit = options?.tenantLimit;
      const pending = [...runs.values()]
        .filter(
          (run) =>
            run.status === "pending" &&
            run.pause === null &&
            leaseFree(run.id, now) &&
            isChannelHead(run) &&
            (tenantLimit === undefined || liveLeasesOf(run.tenantId, run.id, now) < tenantLimit),
        )
        .sort(compareOldestFirst);
      return PRIORITIES.flatMap((priority) =>
        pending
          .filter((run) => run.priority === priority)
          .slice(0, limit)
          .map(copy),
      );
    },
    async requestCancel(id) {
      if (runs.get(id)?.status !== "pending") return false;
      cancelRequests.add(id);
      return true;
    },
  };
}
