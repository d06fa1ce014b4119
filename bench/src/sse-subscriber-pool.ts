import { type ChildChannel, spawnChild } from "./child-channel.ts";
import { type HistogramSnapshot, LatencyHistogram } from "./latency-histogram.ts";

const SCRIPT = `${import.meta.dir}/processes/sse-subscribers.ts`;

export interface Subscription {
  /** Path and query on the SSE host, e.g. `/stream/<thread>`. */
  path: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token: string;
}

export interface PoolReport {
  deliveries: number;
  /** run.completed / run.failed events received. */
  completed: number;
  /** Connections that ended. */
  closed: number;
  firstDeliveryAt: number;
  lastDeliveryAt: number;
  latency: LatencyHistogram;
}

export interface SubscriberPool {
  pids: number[];
  /** Subscribers whose stream answered 200 and sent `ready`. */
  ready: number;
  failed: number;
  firstError: string | null;
  /**
   * Zeroes the counters. With a send window (wall-clock ms, see clock.ts), latency is recorded
   * only for tokens the upstream sent within it; deliveries still count every token.
   */
  reset(window?: { sentFrom: number; sentTo: number }): Promise<void>;
  report(): Promise<PoolReport>;
  /**
   * Polls report() until `deliveries` and `completed` reach these counts, or the timeout, or
   * nothing new arrived for stallMs (default 5 s).
   */
  waitFor(
    target: { deliveries?: number; completed?: number },
    timeoutMs: number,
    stallMs?: number,
  ): Promise<PoolReport>;
  close(): Promise<void>;
  /** CPU seconds each worker used (after close). */
  cpuSeconds(): number[];
}

interface WorkerReport extends Omit<PoolReport, "latency"> {
  type: "report";
  histogram: HistogramSnapshot;
}

/** SSE subscribers spread over `workers` processes (raw sockets), all opened before it resolves. */
export async function openSubscriberPool(options: {
  host: string;
  port: number;
  subscriptions: Subscription[];
  workers: number;
}): Promise<SubscriberPool> {
  const workerCount = Math.max(1, Math.min(options.workers, options.subscriptions.length));
  const share = Math.ceil(options.subscriptions.length / workerCount);
  const workers: ChildChannel[] = [];
  for (let index = 0; index < workerCount; index++) {
    workers.push(spawnChild(["bun", SCRIPT], { fileLimit: share + 1024 }));
  }
  workers.forEach((worker, index) => {
    worker.send({
      type: "open",
      host: options.host,
      port: options.port,
      subscriptions: options.subscriptions.slice(index * share, (index + 1) * share),
    });
  });
  const opened = await Promise.all(
    workers.map((worker) =>
      worker.next<{ type: string; ready: number; failed: number; firstError: string | null }>(
        "opened",
        300_000,
      ),
    ),
  );

  const report = async (): Promise<PoolReport> => {
    for (const worker of workers) worker.send({ type: "report" });
    const reports = await Promise.all(workers.map((worker) => worker.next<WorkerReport>("report", 60_000)));
    const latency = new LatencyHistogram();
    for (const part of reports) latency.merge(part.histogram);
    const starts = reports.map((part) => part.firstDeliveryAt).filter((at) => at > 0);
    return {
      deliveries: reports.reduce((sum, part) => sum + part.deliveries, 0),
      completed: reports.reduce((sum, part) => sum + part.completed, 0),
      closed: reports.reduce((sum, part) => sum + part.closed, 0),
      firstDeliveryAt: starts.length ? Math.min(...starts) : 0,
      lastDeliveryAt: Math.max(0, ...reports.map((part) => part.lastDeliveryAt)),
      latency,
    };
  };

  return {
    pids: workers.map((worker) => worker.pid),
    ready: opened.reduce((sum, part) => sum + part.ready, 0),
    failed: opened.reduce((sum, part) => sum + part.failed, 0),
    firstError: opened.find((part) => part.firstError)?.firstError ?? null,
    async reset(window) {
      for (const worker of workers) worker.send({ type: "reset", ...window });
      await Promise.all(workers.map((worker) => worker.next("reset-done", 60_000)));
    },
    report,
    async waitFor(target, timeoutMs, stallMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      let seen = -1;
      let lastProgressAt = Date.now();
      for (;;) {
        const current = await report();
        const done =
          current.deliveries >= (target.deliveries ?? 0) && current.completed >= (target.completed ?? 0);
        const progress = current.deliveries + current.completed;
        if (progress !== seen) {
          seen = progress;
          lastProgressAt = Date.now();
        }
        if (done || Date.now() > deadline || Date.now() - lastProgressAt > stallMs) return current;
        await Bun.sleep(200);
      }
    },
    async close() {
      for (const worker of workers) worker.send({ type: "close" });
      await Promise.all(workers.map((worker) => Promise.race([worker.exited, Bun.sleep(10_000)])));
      await Promise.all(workers.map((worker) => worker.stop(2_000)));
    },
    cpuSeconds: () => workers.map((worker) => worker.cpuSeconds() ?? Number.NaN),
  };
}
