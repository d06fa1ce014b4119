/**
 * Helpers for this folder's tests only (not exported from the package): a real HTTP receiver on
 * 127.0.0.1, a finished run record, and an outbox write that first stores the runs it refers to.
 */
import type { RunRecord, Store, WebhookDeliveryRecord } from "../ports.ts";
import { storeRunRecord } from "../testing/store-fixtures.ts";

export interface ReceivedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** How the receiver answers a request: a status, or a status with headers and/or a promise it waits on first (a hang). */
export type ReceiverReply =
  | number
  | { status: number; headers?: Record<string, string>; waitFor?: Promise<unknown> };

export interface Receiver {
  url(path?: string): string;
  readonly requests: ReceivedRequest[];
  /** Replies for the next requests on `path`, in order; afterwards `fallback` applies. */
  reply(path: string, ...replies: ReceiverReply[]): void;
  fallback: number;
  stop(): Promise<void>;
}

export function startReceiver(): Receiver {
  const requests: ReceivedRequest[] = [];
  const scripted = new Map<string, ReceiverReply[]>();
  const receiver = {
    requests,
    fallback: 200,
    reply(path: string, ...replies: ReceiverReply[]) {
      scripted.set(path, [...(scripted.get(path) ?? []), ...replies]);
    },
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      requests.push({ path, headers: Object.fromEntries(request.headers), body: await request.text() });
      const next = scripted.get(path)?.shift() ?? receiver.fallback;
      if (typeof next === "number") return new Response(null, { status: next });
      await next.waitFor;
      return new Response(null, { status: next.status, headers: next.headers ?? {} });
    },
  });
  return Object.assign(receiver, {
    url: (path = "/hook") => `http://127.0.0.1:${server.port}${path}`,
    stop: () => server.stop(true),
  });
}

export { waitFor } from "../testing/wait-for.ts";

export function finishedRun(overrides: Partial<RunRecord> & Pick<RunRecord, "tenantId">): RunRecord {
  const finishedAt = new Date();
  return {
    id: crypto.randomUUID(),
    threadId: crypto.randomUUID(),
    channel: "default",
    promptId: crypto.randomUUID(),
    promptVersionId: crypto.randomUUID(),
    promptSlug: "greet",
    promptVersion: 2,
    priority: "normal",
    environment: "production",
    status: "completed",
    inputs: { name: "Ada" },
    metadata: { customer: "acme" },
    encryptedEnvVars: null,
    createdAt: new Date(finishedAt.getTime() - 1_000),
    startedAt: new Date(finishedAt.getTime() - 900),
    finishedAt,
    output: "Hello, Ada!",
    error: null,
    tokenUsage: { input: 10, inputCached: 0, output: 3, reasoning: 0, total: 13 },
    cost: {
      success: { input: 0.001, cachedInput: 0, output: 0.002, webSearch: 0, total: 0.003 },
      retries: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 },
      total: 0.003,
    },
    attempts: 1,
    outputJson: null,
    finishReason: "stop",
    memoryWindow: { messages: 0, dropped: 0 },
    steps: [],
    retrieval: [],
    citations: [],
    pause: null,
    ...overrides,
  };
}

/** Enqueues deliveries as the engine does, after storing the runs they refer to (the stores check). */
export async function enqueueDeliveries(store: Store, deliveries: WebhookDeliveryRecord[]): Promise<void> {
  for (const runId of new Set(deliveries.map((delivery) => delivery.runId))) {
    if (runId === null || (await store.runs.getById(runId)) !== null) continue;
    const tenantId = deliveries.find((delivery) => delivery.runId === runId)?.tenantId ?? "";
    await storeRunRecord(store, finishedRun({ id: runId, tenantId }));
  }
  await store.webhooks.enqueueDeliveries(deliveries);
}
