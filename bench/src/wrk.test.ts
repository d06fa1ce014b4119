import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseWrkOutput, runWrk, wrkAvailable, wrkScript } from "./wrk.ts";

const SAMPLE = `Running 3s test @ http://127.0.0.1:41263/
  1 threads and 100 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.70ms    5.18ms  51.28ms   95.92%
    Req/Sec    47.50k    15.57k   65.92k    60.00%
  Latency Distribution
     50%  850.00us
     75%    2.15ms
     90%    4.39ms
     99%    1.20s
  143174 requests in 3.07s, 18.98MB read
  Socket errors: connect 0, read 2, write 1, timeout 4
  Non-2xx or 3xx responses: 17
Requests/sec:  46626.20
Transfer/sec:      6.18MB
`;

test("parses throughput, percentiles in any unit, errors", () => {
  expect(parseWrkOutput(SAMPLE)).toEqual({
    requestsPerSecond: 46626.2,
    totalRequests: 143174,
    durationSeconds: 3.07,
    latencyMs: { p50: 0.85, p75: 2.15, p90: 4.39, p99: 1200 },
    non2xx: 17,
    socketErrors: 7,
  });
});

test("the Lua script quotes bodies that contain brackets and quotes", () => {
  const script = wrkScript({ method: "POST", body: '{"a":"]]"}', headers: { Authorization: "Bearer k" } });
  expect(script).toContain('wrk.body = [=[{"a":"]]"}]=]');
  expect(script).toContain("wrk.headers[ [[Authorization]] ] = [[Bearer k]]");
});

const scratch = mkdtempSync(join(tmpdir(), "wrk-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

test.if(wrkAvailable())("runs wrk against a real server and counts POSTs with their bodies", async () => {
  let posts = 0;
  let wrongBodies = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      if ((await request.text()) !== '{"x":1}' || request.headers.get("authorization") !== "Bearer k")
        wrongBodies++;
      posts++;
      return new Response(null, { status: posts % 2 ? 202 : 500 });
    },
  });
  try {
    const result = await runWrk({
      url: `http://127.0.0.1:${server.port}/runs`,
      connections: 4,
      durationSeconds: 1,
      request: { method: "POST", body: '{"x":1}', headers: { Authorization: "Bearer k" } },
      scratchDir: scratch,
    });
    expect(result.totalRequests).toBeGreaterThan(10);
    expect(result.totalRequests).toBeLessThanOrEqual(posts);
    expect(wrongBodies).toBe(0);
    // Every other answer is a 500.
    expect(result.non2xx / result.totalRequests).toBeGreaterThan(0.3);
    expect(result.cpuSeconds).toBeGreaterThan(0);
  } finally {
    server.stop(true);
  }
});
