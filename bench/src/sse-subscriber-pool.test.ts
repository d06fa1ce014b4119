import { afterAll, expect, test } from "bun:test";
import { wallClockMs } from "./clock.ts";
import { openSubscriberPool } from "./sse-subscriber-pool.ts";
import { stampToken } from "./stamped-tokens.ts";

// A tiny broadcaster: every subscriber gets `ready`, then each published token.
const encoder = new TextEncoder();
const subscribers = new Set<ReadableStreamDefaultController<Uint8Array>>();
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  idleTimeout: 0,
  fetch(request) {
    if (request.headers.get("authorization") !== "Bearer ok") return new Response(null, { status: 401 });
    let self: ReadableStreamDefaultController<Uint8Array> | undefined;
    return new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          self = controller;
          subscribers.add(controller);
          controller.enqueue(encoder.encode('event: ready\ndata: {"thread":"t"}\n\n'));
        },
        cancel() {
          if (self) subscribers.delete(self);
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  },
});
afterAll(() => server.stop(true));

const publish = (event: string, data: unknown) => {
  const bytes = encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  for (const subscriber of subscribers) subscriber.enqueue(bytes);
};

test("two worker processes open every subscriber, count deliveries and measure stamped latency", async () => {
  const pool = await openSubscriberPool({
    host: "127.0.0.1",
    port: server.port!,
    workers: 2,
    subscriptions: [
      ...Array.from({ length: 30 }, () => ({ path: "/stream/x", token: "ok" })),
      { path: "/stream/x", token: "wrong" },
    ],
  });
  try {
    expect(pool.ready).toBe(30);
    expect(pool.failed).toBe(1);
    expect(pool.firstError).toBe("HTTP 401");
    expect(subscribers.size).toBe(30);
    // Stamped 5 ms in the past: every delivery is at least 5 ms late.
    for (let index = 0; index < 10; index++) {
      publish("run.token", { runId: "r", index, delta: stampToken(wallClockMs() - 5) });
    }
    publish("run.completed", { runId: "r" });
    const report = await pool.waitFor({ deliveries: 300, completed: 30 }, 20_000);
    expect(report.deliveries).toBe(300);
    expect(report.completed).toBe(30);
    expect(report.latency.count).toBe(300);
    expect(report.latency.min).toBeGreaterThanOrEqual(5);
    expect(report.lastDeliveryAt).toBeGreaterThanOrEqual(report.firstDeliveryAt);
    await pool.reset();
    expect((await pool.report()).deliveries).toBe(0);

    // With a send window, only tokens sent inside it are timed; every token still counts.
    const now = wallClockMs();
    await pool.reset({ sentFrom: now - 1_000, sentTo: now + 60_000 });
    publish("run.token", { runId: "r", index: 0, delta: stampToken(now - 2_000) });
    publish("run.token", { runId: "r", index: 1, delta: stampToken(now - 500) });
    const windowed = await pool.waitFor({ deliveries: 60 }, 20_000);
    expect(windowed.deliveries).toBe(60);
    expect(windowed.latency.count).toBe(30);
    expect(windowed.latency.max).toBeLessThan(2_000);
  } finally {
    await pool.close();
  }
  expect(pool.cpuSeconds().every((seconds) => seconds > 0)).toBe(true);
  for (let polls = 0; subscribers.size > 0 && polls < 200; polls++) await Bun.sleep(10);
  expect(subscribers.size).toBe(0);
}, 30_000);
