/**
 * A webhook receiver that is down (connection refused) or failing (500) for the whole retry
 * schedule: every attempt is logged, the delivery ends `failed` after the last one, runs are
 * unaffected and the server keeps serving.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, startServer, type TestServer, waitForRun } from "../support/server.ts";
import { waitUntil } from "./support.ts";

let server: TestServer;
beforeAll(async () => {
  // Four attempts: the first and three retries 0.2 s apart.
  server = await startServer({ env: { PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: "0.2,0.2,0.2" } });
});
afterAll(async () => {
  await server?.dispose();
});

/** A 127.0.0.1 port where nothing listens any more. */
function closedPortUrl(): string {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const url = `http://127.0.0.1:${probe.port}/hook`;
  probe.stop(true);
  return url;
}

interface Attempt {
  attempt: number;
  responseStatus: number | null;
  error: string | null;
  runId: string;
}

async function exhaust(environment: string, url: string) {
  const set = await server.cli("envs", "set", server.tenantId, environment, "X=1");
  expect(set.code).toBe(0);
  const added = await server.cli("webhooks", "add", server.tenantId, environment, url);
  expect(added.code).toBe(0);
  const created = await api(server, "/api/v1/prompts/greet/latest/runs", {
    method: "POST",
    json: { inputs: { name: "Hook" }, environment },
  });
  expect(created.status).toBe(202);
  const { id } = (await created.json()) as { id: string };
  expect((await waitForRun(server, id)).status).toBe("completed");

  const deliveryOf = async () => {
    const [row] = await server.sql<{ status: string; attempts: number }>(
      "select status, attempts from webhook_deliveries where run_id = ?",
      [id],
    );
    return row;
  };
  await waitUntil(
    async () => (await deliveryOf())?.status === "failed",
    "the delivery to end failed",
    20_000,
  );
  const attempts = await server.cli<Attempt[]>("webhooks", "attempts", server.tenantId, "--run", id);
  return { id, delivery: (await deliveryOf())!, attempts: attempts.json };
}

describe("webhook receiver down for the whole retry schedule", () => {
  test("connection refused: four attempts logged with their error, then failed", async () => {
    const { delivery, attempts } = await exhaust("refusing", closedPortUrl());
    expect(delivery).toEqual({ status: "failed", attempts: 4 });
    expect(attempts.map((attempt) => attempt.attempt).sort()).toEqual([1, 2, 3, 4]);
    expect(attempts.every((attempt) => attempt.responseStatus === null && (attempt.error ?? "") !== "")).toBe(
      true,
    );
  });

  test("a receiver answering 500: four attempts with status 500, then failed; the server is unaffected", async () => {
    let calls = 0;
    const receiver = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => {
        calls += 1;
        return new Response("down for maintenance", { status: 500 });
      },
    });
    try {
      const { delivery, attempts } = await exhaust("failing", `http://127.0.0.1:${receiver.port}/hook`);
      expect(delivery).toEqual({ status: "failed", attempts: 4 });
      expect(attempts.map((attempt) => attempt.responseStatus)).toEqual([500, 500, 500, 500]);
      expect(calls).toBe(4);
      // No fifth attempt comes later.
      await Bun.sleep(800);
      expect(calls).toBe(4);
    } finally {
      receiver.stop(true);
    }
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    const next = await api(server, "/api/v1/prompts/greet/latest/runs", {
      method: "POST",
      json: { inputs: { name: "Still fine" } },
    });
    const { id } = (await next.json()) as { id: string };
    expect((await waitForRun(server, id)).status).toBe("completed");
  });
});
