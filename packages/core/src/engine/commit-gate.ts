import type { ThreadEvent } from "@promptrun/contract";
import type { ThreadEventBus } from "../ports.ts";

type Publish = ThreadEventBus["publish"];

/**
 * Holds back what a run publishes until its insert has committed. A run may start before that
 * (RunEngine.enqueue): its provider call then overlaps the commit's fsync, but no subscriber may
 * see a run that could still vanish. Events queued meanwhile go out in order when the commit
 * lands, and are dropped if it fails.
 */
export class CommitGate {
  /** Resolves true once the run is durable, false if its insert failed. Never rejects. */
  readonly committed: Promise<boolean>;
  private held: Array<Parameters<Publish>> | null = [];
  private failed = false;

  /** `durable`: the run's insert, still in flight; null when it has committed already. */
  constructor(
    private readonly events: Pick<ThreadEventBus, "publish">,
    durable: Promise<unknown> | null,
  ) {
    if (durable === null) {
      this.held = null;
      this.committed = Promise.resolve(true);
      return;
    }
    this.committed = durable.then(
      () => {
        const held = this.held ?? [];
        this.held = null;
        for (const args of held) this.events.publish(...args);
        return true;
      },
      () => {
        this.held = null;
        this.failed = true;
        return false;
      },
    );
  }

  /** True once the run's insert has committed (always, for a run handed over after it). */
  get isCommitted(): boolean {
    return this.held === null && !this.failed;
  }

  /** Publishes now if the run is durable, else when it becomes so. */
  publish(tenantId: string, threadId: string, event: ThreadEvent): void {
    if (this.failed) return;
    if (this.held === null) this.events.publish(tenantId, threadId, event);
    else this.held.push([tenantId, threadId, event]);
  }
}
