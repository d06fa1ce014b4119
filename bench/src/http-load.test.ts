import { afterAll, expect, test } from "bun:test";
import { runHttpLoad } from "./http-load.ts";
import { LatencyHistogram } from "./latency-histogram.ts";
import { runLoadGeneratorProcess } from "./load-generator-process.ts";

let inFlight = 0;
let maxInFlight = 0;
let received = 0;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const body = await request.text();
    await Bun.sleep(2);
    inFlight--;
    received++;
    if (body !== "payload") return new Response("bad body", { status: 400 });
    return new Response(null, { status: received % 10 === 0 ? 503 : 202 });
  },
});
afterAll(() => server.stop(true));
const url = `http://127.0.0.1:${server.port}/`;

test("sends exactly totalRequests with the given concurrency and counts statuses", async () => {
  received = 0;
  maxInFlight = 0;
  const result = await runHttpLoad({
    url,
    method: "POST",
    body: "payload",
    concurrency: 8,
    totalRequests: 200,
  });
  expect(result.requests).toBe(200);
  expect(received).toBe(200);
  expect(result.non2xx).toBe(20);
  expect(result.ok).toBe(180);
  expect(result.errors).toBe(0);
  expect(maxInFlight).toBe(8);
  expect(LatencyHistogram.from(result.latency).percentile(50)).toBeGreaterThanOrEqual(2);
});

test("a refused connection counts as an error, not a success", async () => {
  const result = await runHttpLoad({
    url: "http://127.0.0.1:1/",
    method: "GET",
    concurrency: 1,
    totalRequests: 3,
  });
  expect(result.errors).toBe(3);
  expect(result.firstError).not.toBeNull();
});

test("the separate process reports its result and CPU", async () => {
  received = 0;
  const result = await runLoadGeneratorProcess({
    url,
    method: "POST",
    body: "payload",
    concurrency: 4,
    totalRequests: 40,
  });
  expect(result.requests).toBe(40);
  expect(received).toBe(40);
  expect(result.cpuSeconds).toBeGreaterThan(0);
});

test("spreads requests round-robin over several urls", async () => {
  const hits = [0, 0, 0];
  const targets = hits.map((_, index) =>
    Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch() {
        hits[index]!++;
        return new Response(null, { status: 204 });
      },
    }),
  );
  try {
    const result = await runHttpLoad({
      url: "http://127.0.0.1:9/never-used",
      urls: targets.map((target) => `http://127.0.0.1:${target.port}/`),
      method: "GET",
      concurrency: 4,
      totalRequests: 30,
    });
    expect(result.ok).toBe(30);
    expect(hits).toEqual([10, 10, 10]);
  } finally {
    for (const target of targets) target.stop(true);
  }
});
