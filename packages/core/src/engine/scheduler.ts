import type { Priority } from "@promptrun/contract";
import { type HeapItem, IndexedHeap, outsideHeap } from "./indexed-heap.ts";

export interface ScheduledRun {
  runId: string;
  tenantId: string;
  threadId: string;
  channel: string;
  priority: Priority;
  /** Epoch ms (the run's createdAt): orders its channel and ages its priority. */
  enqueuedAt: number;
}

export interface SchedulerOptions {
  /** Runs executing at once, in all. */
  concurrency: number;
  /** Runs executing at once per tenant. */
  tenantConcurrency: number;
  /** What one priority class is worth in queueing time (config.agingSeconds, in ms). */
  agingMs: number;
  /**
   * Global slots kept for tenants with nothing executing (default: reservedSlotsFor(concurrency)).
   * 0 turns the reserve off.
   */
  reservedSlots?: number;
}

/**
 * The newcomers' reserve: one slot in eight (at least one once there are two slots), but never
 * more than a single tenant could not use anyway, so one tenant alone still reaches its limit.
 */
export const reservedSlotsFor = (concurrency: number, tenantConcurrency: number): number =>
  concurrency < 2
    ? 0
    : Math.min(Math.max(1, Math.floor(concurrency / 8)), Math.max(0, concurrency - tenantConcurrency));

export interface SchedulerStats {
  queued: Record<Priority, number>;
  executing: number;
}

interface QueueNode extends HeapItem {
  run: ScheduledRun;
  /** enqueuedAt + class offset: the smallest goes first, so a waiting low run eventually wins. */
  deadline: number;
  sequence: number;
  channel: ChannelState;
  previous: QueueNode | null;
  next: QueueNode | null;
}

interface ChannelState {
  key: string;
  tenant: TenantState;
  first: QueueNode | null;
  last: QueueNode | null;
  /** The run of this channel that is executing (the channel's next waits for it to end). */
  executing: string | null;
  /**
   * The run of this channel paused for tool outputs: it holds no slot, but the channel's next
   * waits for it to continue and end (docs/TOOLS.md "Paused runs").
   */
  paused: string | null;
}

interface TenantState extends HeapItem {
  id: string;
  /** Heads of this tenant's idle channels. */
  ready: IndexedHeap<QueueNode>;
  executing: number;
  channels: number;
  /** Its place in the heap of idle eligible tenants. */
  idleEntry: IdleEntry;
}

interface IdleEntry extends HeapItem {
  tenant: TenantState;
}

export const CLASS_RANK: Record<Priority, number> = { onsite: 0, normal: 1, low: 2 };

const nodeBefore = (a: QueueNode, b: QueueNode): boolean =>
  a.deadline < b.deadline || (a.deadline === b.deadline && a.sequence < b.sequence);

const tenantBefore = (a: TenantState, b: TenantState): boolean =>
  nodeBefore(a.ready.peek()!, b.ready.peek()!);

/** Channel order: creation time, then arrival. */
const channelBefore = (a: QueueNode, b: QueueNode): boolean =>
  a.run.enqueuedAt < b.run.enqueuedAt || (a.run.enqueuedAt === b.run.enqueuedAt && a.sequence < b.sequence);

/**
 * In-memory run queue (the database holds the durable state).
 * - Strict FIFO per (tenant, thread, channel): a channel's next run is ready only once the
 *   previous one has ended; channels are independent.
 * - onsite > normal > low with aging: key = enqueuedAt + rank × agingMs, smallest first.
 * - A global and a per-tenant limit; a tenant at its limit leaves the eligible set (its ready
 *   heads stay parked) so it never blocks others.
 * - Fair share (docs/ARCHITECTURE.md): the last `reservedSlots` free global slots go only to
 *   tenants with nothing executing. Busy tenants cannot fill the whole pool, so a newcomer starts
 *   at once instead of waiting for someone's run to end; and while the pool is that full, every
 *   slot that frees up goes to a waiting newcomer before a busy tenant.
 * Taking the next run is two heap peeks and pops: O(log n) in queued runs, whatever the backlog.
 */
export class RunScheduler {
  private readonly queued = new Map<string, QueueNode>();
  private readonly executing = new Map<string, ChannelState>();
  private readonly paused = new Map<string, ChannelState>();
  private readonly channels = new Map<string, ChannelState>();
  private readonly tenants = new Map<string, TenantState>();
  /** Tenants with a ready head and a free tenant slot, keyed by their best head. */
  private readonly eligible = new IndexedHeap<TenantState>(tenantBefore);
  /**
   * The eligible tenants with nothing executing (a subset, in a heap of its own: an item's
   * heapIndex is per heap, so TenantState carries one for each). Kept only with a reserve.
   */
  private readonly eligibleIdle = new IndexedHeap<IdleEntry>((a, b) => tenantBefore(a.tenant, b.tenant));
  private readonly reservedSlots: number;
  private readonly queuedByClass: Record<Priority, number> = { onsite: 0, normal: 0, low: 0 };
  private sequence = 0;

  constructor(private readonly options: SchedulerOptions) {
    this.reservedSlots =
      options.reservedSlots ?? reservedSlotsFor(options.concurrency, options.tenantConcurrency);
  }

  /** Adds a run; false when it is already queued, executing or paused. */
  enqueue(run: ScheduledRun): boolean {
    if (this.queued.has(run.runId) || this.executing.has(run.runId) || this.paused.has(run.runId))
      return false;
    const channel = this.channelOf(run);
    const node: QueueNode = {
      heapIndex: outsideHeap(),
      run,
      deadline: run.enqueuedAt + CLASS_RANK[run.priority] * this.options.agingMs,
      sequence: this.sequence++,
      channel,
      previous: null,
      next: null,
    };
    const previousHead = channel.first;
    this.insertInOrder(channel, node);
    this.queued.set(run.runId, node);
    this.queuedByClass[run.priority]++;
    if (channel.first !== previousHead) this.headChanged(channel, previousHead);
    return true;
  }

  /** Takes the next run that may start now (and its slots), or null. */
  next(): ScheduledRun | null {
    const free = this.options.concurrency - this.executing.size;
    if (free <= 0) return null;
    // Inside the reserve only a tenant with nothing executing may start.
    const tenant = free > this.reservedSlots ? this.eligible.peek() : this.eligibleIdle.peek()?.tenant;
    if (!tenant) return null;
    const node = tenant.ready.pop()!;
    const channel = node.channel;
    this.unlink(channel, node);
    this.queued.delete(node.run.runId);
    this.queuedByClass[node.run.priority]--;
    channel.executing = node.run.runId;
    this.executing.set(node.run.runId, channel);
    tenant.executing++;
    this.refreshTenant(tenant);
    return node.run;
  }

  /** Releases the slots of a run that ended (or was stopped); its channel's next becomes ready. */
  finish(runId: string): void {
    const channel = this.releaseSlots(runId);
    if (!channel) return;
    if (channel.first && channel.paused === null) channel.tenant.ready.push(channel.first);
    this.refreshTenant(channel.tenant);
    this.forgetIfEmpty(channel);
  }

  /** An executing run paused for tool outputs: its slots are free, its channel stays blocked. */
  pause(runId: string): void {
    const channel = this.releaseSlots(runId);
    if (!channel) return;
    channel.paused = runId;
    this.paused.set(runId, channel);
    this.refreshTenant(channel.tenant);
  }

  /** A paused run known at start (recovery): its channel waits for it. False when it is known already. */
  holdPaused(run: ScheduledRun): boolean {
    if (this.queued.has(run.runId) || this.executing.has(run.runId) || this.paused.has(run.runId))
      return false;
    const channel = this.channelOf(run);
    const previousHead = channel.first;
    channel.paused = run.runId;
    this.paused.set(run.runId, channel);
    if (previousHead) channel.tenant.ready.remove(previousHead);
    this.refreshTenant(channel.tenant);
    return true;
  }

  /**
   * A paused run continues (its tool outputs came) or has ended (expired, cancelled): its
   * channel is no longer held by it. A continuing run is enqueued again right after.
   */
  unpause(runId: string): void {
    const channel = this.paused.get(runId);
    if (!channel) return;
    this.paused.delete(runId);
    channel.paused = null;
    if (channel.executing === null && channel.first) channel.tenant.ready.update(channel.first);
    this.refreshTenant(channel.tenant);
    this.forgetIfEmpty(channel);
  }

  isPaused(runId: string): boolean {
    return this.paused.has(runId);
  }

  private releaseSlots(runId: string): ChannelState | null {
    const channel = this.executing.get(runId);
    if (!channel) return null;
    this.executing.delete(runId);
    channel.executing = null;
    channel.tenant.executing--;
    return channel;
  }

  /** Drops a queued (not executing) run; true if it was queued. */
  remove(runId: string): boolean {
    const node = this.queued.get(runId);
    if (!node) return false;
    const channel = node.channel;
    const previousHead = channel.first;
    channel.tenant.ready.remove(node);
    this.unlink(channel, node);
    this.queued.delete(runId);
    this.queuedByClass[node.run.priority]--;
    if (channel.first !== previousHead) this.headChanged(channel, null);
    else this.refreshTenant(channel.tenant);
    this.forgetIfEmpty(channel);
    return true;
  }

  isQueued(runId: string): boolean {
    return this.queued.has(runId);
  }

  isExecuting(runId: string): boolean {
    return this.executing.has(runId);
  }

  stats(): SchedulerStats {
    return { queued: { ...this.queuedByClass }, executing: this.executing.size };
  }

  /** Forgets every queued run (executing ones keep their slots until finish). */
  clearQueued(): void {
    for (const runId of [...this.queued.keys()]) this.remove(runId);
  }

  private channelOf(run: ScheduledRun): ChannelState {
    const key = `${run.tenantId}\u0000${run.threadId}\u0000${run.channel}`;
    let channel = this.channels.get(key);
    if (!channel) {
      let tenant = this.tenants.get(run.tenantId);
      if (!tenant) {
        const created = {
          heapIndex: outsideHeap(),
          id: run.tenantId,
          ready: new IndexedHeap(nodeBefore),
          executing: 0,
          channels: 0,
        } as TenantState;
        created.idleEntry = { heapIndex: outsideHeap(), tenant: created };
        tenant = created;
        this.tenants.set(run.tenantId, tenant);
      }
      tenant.channels++;
      channel = { key, tenant, first: null, last: null, executing: null, paused: null };
      this.channels.set(key, channel);
    }
    return channel;
  }

  /** Appends, or walks back from the tail for a run created earlier (recovery races). */
  private insertInOrder(channel: ChannelState, node: QueueNode): void {
    let after = channel.last;
    while (after && channelBefore(node, after)) after = after.previous;
    node.previous = after;
    node.next = after ? after.next : channel.first;
    if (node.next) node.next.previous = node;
    else channel.last = node;
    if (after) after.next = node;
    else channel.first = node;
  }

  private unlink(channel: ChannelState, node: QueueNode): void {
    if (node.previous) node.previous.next = node.next;
    else channel.first = node.next;
    if (node.next) node.next.previous = node.previous;
    else channel.last = node.previous;
    node.previous = null;
    node.next = null;
  }

  /** Keeps "the ready heap holds exactly the heads of idle channels" after the head moved. */
  private headChanged(channel: ChannelState, oldHead: QueueNode | null): void {
    const tenant = channel.tenant;
    if (oldHead) tenant.ready.remove(oldHead);
    if (channel.executing === null && channel.paused === null && channel.first)
      tenant.ready.update(channel.first);
    this.refreshTenant(tenant);
  }

  private refreshTenant(tenant: TenantState): void {
    const isEligible = tenant.ready.size > 0 && tenant.executing < this.options.tenantConcurrency;
    if (isEligible) this.eligible.update(tenant);
    else this.eligible.remove(tenant);
    if (this.reservedSlots === 0) return;
    if (isEligible && tenant.executing === 0) this.eligibleIdle.update(tenant.idleEntry);
    else this.eligibleIdle.remove(tenant.idleEntry);
  }

  private forgetIfEmpty(channel: ChannelState): void {
    if (channel.first || channel.executing !== null || channel.paused !== null) return;
    this.channels.delete(channel.key);
    const tenant = channel.tenant;
    tenant.channels--;
    if (tenant.channels === 0 && tenant.executing === 0) {
      this.eligible.remove(tenant);
      this.eligibleIdle.remove(tenant.idleEntry);
      this.tenants.delete(tenant.id);
    }
  }
}
