/**
 * Environments and webhooks end to end: a real receiver on 127.0.0.1 verifies Standard Webhooks
 * signatures, retries, environment scoping, restarts with deliveries pending, and env vars that
 * never reach the database in clear.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { echoPrompt, pushPrompts } from "./hardening/support.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";
import { listTables, tablesContaining } from "./support/tables.ts";

interface Received {
  id: string;
  timestamp: string;
  body: string;
  verified: boolean;
  payload: { type: string; data: Record<string, unknown> };
}

function startReceiver(secretRef: { secret: string }, failFirst = 0) {
  const received: Received[] = [];
  let calls = 0;
  const receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      calls += 1;
      const body = await request.text();
      const headers = Object.fromEntries(request.headers.entries());
      let verified = false;
      try {
        new Webhook(secretRef.secret).verify(body, headers);
        verified = true;
      } catch {
        verified = false;
      }
      received.push({
        id: headers["webhook-id"] ?? "",
        timestamp: headers["webhook-timestamp"] ?? "",
        body,
        verified,
        payload: JSON.parse(body) as Received["payload"],
      });
      if (calls <= failFirst) return new Response("try later", { status: 500 });
      return new Response("ok");
    },
  });
  return {
    received,
    url: `http://127.0.0.1:${receiver.port}/hook`,
    stop: () => receiver.stop(true),
    calls: () => calls,
  };
}

const waitUntil = async (condition: () => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(25);
  }
};

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ env: { PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: "0.2,0.2,0.2" } });
});
afterAll(async () => {
  await server?.dispose();
});

const run = async (body: Record<string, unknown>) => {
  const response = await api(server, "/api/v1/prompts/greet/latest/runs", { method: "POST", json: body });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
};

describe("webhooks", () => {
  test("signed, retried after 500s with the same webhook-id, scoped to the run's environment", async () => {
    const productionSecret = { secret: "" };
    const stagingSecret = { secret: "" };
    const production = startReceiver(productionSecret, 2);
    const staging = startReceiver(stagingSecret);
    try {
      await server.cli("envs", "set", server.tenantId, "staging", "GREETING=hi");
      const added = await server.cli<{ id: string; secret: string }>(
        "webhooks",
        "add",
        server.tenantId,
        "production",
        production.url,
      );
      expect(added.code).toBe(0);
      expect(added.json.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32,}$/);
      productionSecret.secret = added.json.secret;
      stagingSecret.secret = (
        await server.cli<{ secret: string }>("webhooks", "add", server.tenantId, "staging", staging.url)
      ).json.secret;

      const productionRun = await run({ inputs: { name: "Prod" }, metadata: { order: "42" } });
      const stagingRun = await run({ inputs: { name: "Stage" }, environment: "staging" });
      await waitForRun(server, productionRun);
      await waitForRun(server, stagingRun);

      await waitUntil(() => production.calls() >= 3);
      const attempts = production.received.filter((item) => item.payload.data.id === productionRun);
      expect(attempts.length).toBe(3);
      expect(new Set(attempts.map((item) => item.id)).size).toBe(1);
      expect(attempts.every((item) => item.verified)).toBe(true);
      expect(attempts[0]!.payload).toMatchObject({
        type: "run.completed",
        data: {
          id: productionRun,
          status: "completed",
          environment: "production",
          metadata: { order: "42" },
          prompt: { slug: "greet" },
        },
      });

      await waitUntil(() => staging.received.length >= 1);
      expect(staging.received.map((item) => item.payload.data.id)).toEqual([stagingRun]);
      expect(production.received.some((item) => item.payload.data.id === stagingRun)).toBe(false);

      const log = await server.cli<Array<{ responseStatus: number | null; attempt: number; runId: string }>>(
        "webhooks",
        "attempts",
        server.tenantId,
        "--run",
        productionRun,
      );
      expect(log.json.map((attempt) => attempt.responseStatus).sort()).toEqual([200, 500, 500]);
    } finally {
      production.stop();
      staging.stop();
    }
  });

  test("deliveries pending at a restart are delivered after it", async () => {
    let own = await startServer({ env: { PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: "3,3" } });
    try {
      const secret = { secret: "" };
      const receiver = startReceiver(secret);
      const port = new URL(receiver.url).port;
      const unknownEnvironment = await own.cli("webhooks", "add", own.tenantId, "later", receiver.url);
      expect(unknownEnvironment.code).not.toBe(0);
      await own.cli("envs", "set", own.tenantId, "later", "X=1");
      secret.secret = (
        await own.cli<{ secret: string }>("webhooks", "add", own.tenantId, "later", receiver.url)
      ).json.secret;
      receiver.stop(); // the first attempt fails: the receiver is down
      const response = await api(own, "/api/v1/prompts/greet/latest/runs", {
        method: "POST",
        json: { inputs: { name: "Restart" }, environment: "later" },
      });
      const { id: runId } = (await response.json()) as { id: string };
      await waitForRun(own, runId);
      own = await own.restart();
      const revived = startReceiverOnPort(secret, port);
      try {
        await waitUntil(() => revived.received.some((item) => item.payload.data.id === runId), 30_000);
        expect(revived.received.find((item) => item.payload.data.id === runId)?.verified).toBe(true);
      } finally {
        revived.stop();
      }
    } finally {
      await own.dispose();
    }
  }, 60_000);

  test("no env var value is stored in clear in any table (or the SQLite file), checked while the run is pending", async () => {
    // A run that stays pending for ~20 s: its envVars are in the database only until it ends.
    await pushPrompts(server, server.tenantId, [echoPrompt("slow-secret", 1_000)]);
    const marker = `SECRET-${crypto.randomUUID()}`;
    await server.cli("envs", "set", server.tenantId, "production", `VENDOR_TOKEN=${marker}`);
    const visible = `visible-${crypto.randomUUID()}`;
    const created = await api(server, "/api/v1/prompts/slow-secret/latest/runs", {
      method: "POST",
      json: {
        inputs: { text: `${visible} ${"word ".repeat(20)}` },
        envVars: { RUN_ONLY: `${marker}-run` },
      },
    });
    expect(created.status).toBe(202);
    const runId = ((await created.json()) as { id: string }).id;
    try {
      // The premise: the run is pending and its envVars are stored (encrypted) right now.
      const [row] = await server.sql<{ status: string; encrypted_env_vars: string | null }>(
        "select status, encrypted_env_vars from runs where id = ?",
        [runId],
      );
      expect(row?.status).toBe("pending");
      expect(row?.encrypted_env_vars).toBeString();

      // The scan covers the tables holding the encrypted values, and finds what is stored in clear.
      const tables = await listTables(server);
      expect(tables.some((table) => table.endsWith('"env_vars"'))).toBe(true);
      expect(await tablesContaining(server, visible)).toContainEqual(expect.stringMatching(/"runs"$/));
      expect(await tablesContaining(server, marker)).toEqual([]);

      if (server.dialect === "sqlite") {
        // Bytes on disk too, WAL included (where a fresh row lives until a checkpoint).
        const path = server.env.DATABASE_URL!.slice("file:".length);
        const wal = Bun.file(`${path}-wal`);
        if (await wal.exists()) expect(Buffer.from(await wal.arrayBuffer()).includes(marker)).toBe(false);
        expect(Buffer.from(await Bun.file(path).arrayBuffer()).includes(marker)).toBe(false);
      }
      const [still] = await server.sql<{ status: string }>("select status from runs where id = ?", [runId]);
      expect(still?.status).toBe("pending");
    } finally {
      await api(server, `/api/v1/promptruns/${runId}/cancel`, { method: "POST" });
      await waitForRun(server, runId);
    }
    // Ended: the run's envVars are erased, not only unreadable.
    const [ended] = await server.sql<{ encrypted_env_vars: string | null }>(
      "select encrypted_env_vars from runs where id = ?",
      [runId],
    );
    expect(ended?.encrypted_env_vars ?? null).toBeNull();
    expect(await tablesContaining(server, marker)).toEqual([]);
  }, 60_000);
});

function startReceiverOnPort(secretRef: { secret: string }, port: string) {
  const received: Received[] = [];
  const receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: Number(port),
    async fetch(request) {
      const body = await request.text();
      const headers = Object.fromEntries(request.headers.entries());
      let verified = false;
      try {
        new Webhook(secretRef.secret).verify(body, headers);
        verified = true;
      } catch {
        verified = false;
      }
      received.push({
        id: headers["webhook-id"] ?? "",
        timestamp: headers["webhook-timestamp"] ?? "",
        body,
        verified,
        payload: JSON.parse(body) as Received["payload"],
      });
      return new Response("ok");
    },
  });
  return { received, stop: () => receiver.stop(true) };
}
