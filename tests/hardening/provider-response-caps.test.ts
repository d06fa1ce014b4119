/**
 * A hostile upstream, end to end: a provider that streams 256 MB without a newline to four runs
 * at once. Each run fails at the line cap (default 1 MiB) without retries, the connections are
 * dropped, the server's memory stays bounded, and another tenant's run completes promptly
 * meanwhile.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakeProviderServer, startFakeOpenAI } from "@promptrun/core/testing";
import { demoKnowledgeIngested } from "../support/knowledge.ts";
import { api, startServer, type TestServer, waitForRun } from "../support/server.ts";
import { createTenant, echoPrompt, pushPrompts, residentKb, type Tenant } from "./support.ts";

const MiB = 1024 * 1024;
let server: TestServer;
let hostile: FakeProviderServer;
let victim: Tenant;

beforeAll(async () => {
  hostile = startFakeOpenAI({ type: "flood", bytes: 256 * MiB });
  server = await startServer({ env: { PROMPTRUN_PROVIDERS: `hostile=${hostile.baseUrl}` } });
  await demoKnowledgeIngested(server);
  await pushPrompts(server, server.tenantId, [{ ...echoPrompt("flooded"), model: "hostile:any" }]);
  victim = await createTenant(server, "bystander");
  await pushPrompts(server, victim.id, [echoPrompt("quick")]);
});
afterAll(async () => {
  await server?.dispose();
  await hostile?.close();
});

describe("provider response caps", () => {
  test("four runs against a newline-less 256 MB stream fail at the line cap; another tenant's run completes promptly", async () => {
    const rssBefore = residentKb(server.process.pid);
    const flooded = await Promise.all(
      [1, 2, 3, 4].map(async (index) => {
        const created = await api(server, "/api/v1/prompts/flooded/latest/runs", {
          method: "POST",
          json: { inputs: { text: `flood ${index}` } },
        });
        expect(created.status).toBe(202);
        return ((await created.json()) as { id: string }).id;
      }),
    );
    await hostile.waitForRequests(4, 10_000);

    const startedAt = performance.now();
    const created = await api(server, "/api/v1/prompts/quick/latest/runs", {
      method: "POST",
      key: victim.apiKey,
      json: { inputs: { text: "still here" } },
    });
    expect(created.status).toBe(202);
    const quick = await waitForRun(
      { url: server.url, apiKey: victim.apiKey },
      ((await created.json()) as { id: string }).id,
    );
    expect(quick).toMatchObject({ status: "completed", output: "still here" });
    // Generous on a shared 2-core machine; the point is "not after the floods".
    expect(performance.now() - startedAt).toBeLessThan(10_000);

    for (const id of flooded) {
      const run = await waitForRun(server, id, 60_000);
      expect(run).toMatchObject({
        status: "failed",
        attempts: 1,
        error: "hostile provider response too large: a line passed 1048576 bytes without a newline",
      });
    }
    expect(hostile.requests).toHaveLength(4);
    for (const index of [0, 1, 2, 3]) {
      const stream = await hostile.waitForStreamEnd(index, 10_000);
      expect(stream.outcome).toBe("client-closed");
      expect(stream.tokensSent).toBeLessThan(64 * MiB);
    }
    // Unbounded, 4 × 256 MB were buffered (≈ 1.25 GB RSS); bounded, a few MiB per stream.
    expect(residentKb(server.process.pid) - rssBefore).toBeLessThan(256 * 1024);
  }, 120_000);
});
