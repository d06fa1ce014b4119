/**
 * Idempotency-Key on create-run over real HTTP: a retried request replays the original answer,
 * a different request under the same key conflicts, a burst of concurrent duplicates creates
 * exactly one run in the database, keys are scoped per tenant, and replays survive a restart.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, createHmac, hkdfSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { api, startServer, type TestServer } from "../support/server.ts";
import { SseConnection } from "../support/sse.ts";
import { countRows, createTenant, pushPrompts, type Tenant } from "./support.ts";

let server: TestServer;
let otherTenant: Tenant;

beforeAll(async () => {
  server = await startServer();
  otherTenant = await createTenant(server, "other");
});
afterAll(async () => {
  await server?.dispose();
});

const createRun = (body: unknown, key: string, apiKey = server.apiKey) =>
  api({ url: server.url, apiKey }, "/api/v1/prompts/greet/latest/runs", {
    method: "POST",
    json: body,
    headers: { "idempotency-key": key },
  });

const runsWithKey = (key: string) =>
  countRows(
    server,
    "select count(*) as n from runs where id in (select run_id from idempotency_keys where key = ?)",
    key,
  );

/** Object keys sorted at every level, as the server fingerprints a request. */
const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );

/** The data set's secret: PROMPTRUN_SECRET on Postgres, the generated file beside a SQLite database. */
const serverSecret = () =>
  server.env.PROMPTRUN_SECRET ?? readFileSync(join(server.dataDir, "promptrun.secret"), "utf8").trim();

const storedFingerprint = async (key: string) => {
  const rows = await server.sql<{ request_hash: string }>(
    "select request_hash from idempotency_keys where key = ?",
    [key],
  );
  return rows[0]!.request_hash;
};

describe("Idempotency-Key on POST /api/v1/prompts/{slug}/{version}/runs", () => {
  test("the stored request fingerprint is keyed with the server secret, never a plain hash of envVars", async () => {
    const key = `fingerprint-${crypto.randomUUID()}`;
    const body = { inputs: { name: "Ada" }, envVars: { VENDOR_TOKEN: "guessable-1234" } };
    expect((await createRun(body, key)).status).toBe(202);
    const request = canonicalJson({ slug: "greet", version: "latest", request: body });
    const stored = await storedFingerprint(key);
    expect(stored).not.toBe(createHash("sha256").update(request).digest("hex"));
    const fingerprintKey = Buffer.from(
      hkdfSync("sha256", serverSecret(), "promptrun", "promptrun/idempotency-fingerprint/v1", 32),
    );
    expect(stored).toBe(createHmac("sha256", fingerprintKey).update(request).digest("hex"));
    const replayed = await createRun(body, key);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
  });

  test("a key stored before the upgrade (plain SHA-256) still replays its request and refuses another", async () => {
    const key = `legacy-${crypto.randomUUID()}`;
    const body = { inputs: { name: "Ada" }, envVars: { VENDOR_TOKEN: "t" } };
    const first = await createRun(body, key);
    expect(first.status).toBe(202);
    const legacy = createHash("sha256")
      .update(canonicalJson({ slug: "greet", version: "latest", request: body }))
      .digest("hex");
    await server.sql("update idempotency_keys set request_hash = ? where key = ?", [legacy, key], {
      write: true,
    });
    const replayed = await createRun(body, key);
    expect(replayed.status).toBe(202);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(await replayed.json()).toEqual(await first.json());
    expect((await createRun({ ...body, envVars: { VENDOR_TOKEN: "u" } }, key)).status).toBe(409);
  });

  test("the same key and body replay the original {id, thread} with Idempotent-Replayed", async () => {
    const key = `replay-${crypto.randomUUID()}`;
    const first = await createRun({ inputs: { name: "Ada" }, metadata: { order: "1" } }, key);
    expect(first.status).toBe(202);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const original = (await first.json()) as { id: string; thread: string };

    // Key order in the JSON does not make it another request.
    const second = await createRun({ metadata: { order: "1" }, inputs: { name: "Ada" } }, key);
    expect(second.status).toBe(202);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.headers.get("location")).toBe(`/api/v1/promptruns/${original.id}`);
    expect(await second.json()).toEqual(original);
    expect(await runsWithKey(key)).toBe(1);
  });

  test("the same key with a different body is a 409 with an error body and creates nothing", async () => {
    const key = `conflict-${crypto.randomUUID()}`;
    expect((await createRun({ inputs: { name: "Ada" } }, key)).status).toBe(202);
    const before = await countRows(server, "select count(*) as n from runs");
    for (const body of [{ inputs: { name: "Grace" } }, { inputs: { name: "Ada" }, priority: "low" }]) {
      const conflict = await createRun(body, key);
      expect(conflict.status).toBe(409);
      expect(conflict.headers.get("content-type")).toContain("application/json");
      expect(((await conflict.json()) as { error: string }).error).toContain("Idempotency-Key");
    }
    // Another prompt under the same key is another request too.
    const otherPrompt = await api(server, "/api/v1/prompts/chat/latest/runs", {
      method: "POST",
      json: { inputs: { message: "hi" } },
      headers: { "idempotency-key": key },
    });
    expect(otherPrompt.status).toBe(409);
    expect(await countRows(server, "select count(*) as n from runs")).toBe(before);
  });

  test("50 concurrent duplicates create exactly one run and all get its id", async () => {
    const key = `burst-${crypto.randomUUID()}`;
    const before = await countRows(server, "select count(*) as n from runs");
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => createRun({ inputs: { name: "Burst" } }, key)),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.every((status) => status === 202)).toBe(true);
    const bodies = (await Promise.all(responses.map((response) => response.json()))) as Array<{
      id: string;
      thread: string;
    }>;
    expect(new Set(bodies.map((body) => body.id)).size).toBe(1);
    expect(new Set(bodies.map((body) => body.thread)).size).toBe(1);
    const replayed = responses.filter((response) => response.headers.get("idempotent-replayed") === "true");
    expect(replayed.length).toBe(49);

    expect(await countRows(server, "select count(*) as n from runs")).toBe(before + 1);
    expect(await countRows(server, "select count(*) as n from idempotency_keys where key = ?", key)).toBe(1);
    expect(await runsWithKey(key)).toBe(1);
  });

  test("on one thread, the duplicates that lose the race never show on its stream", async () => {
    // The losers' inserts fail on the key: the thread's subscriber sees one run, started once.
    const key = `stream-${crypto.randomUUID()}`;
    const thread = crypto.randomUUID();
    const minted = (await (
      await api(server, `/api/v1/threads/${thread}/stream-token`, { method: "POST" })
    ).json()) as { token: string; url: string };
    const stream = await SseConnection.open(minted.url, { token: minted.token });
    try {
      await stream.waitFor((event) => event.event === "ready");
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => createRun({ inputs: { name: "Once" }, thread }, key)),
      );
      expect(responses.map((response) => response.status).every((status) => status === 202)).toBe(true);
      const { id } = (await responses[0]!.json()) as { id: string };
      await stream.waitFor((event) => event.event === "run.completed");
      await Bun.sleep(100);
      const runEvents = stream.events.filter((event) => event.event.startsWith("run."));
      expect(new Set(runEvents.map((event) => event.data.runId))).toEqual(new Set([id]));
      expect(runEvents.filter((event) => event.event === "run.started")).toHaveLength(1);
      expect(runEvents.at(-1)?.event).toBe("run.completed");
      expect(await countRows(server, "select count(*) as n from runs where thread_id = ?", thread)).toBe(1);
    } finally {
      stream.close();
    }
  });

  test("keys are scoped per tenant: another tenant's identical key and body start its own run", async () => {
    const key = `shared-${crypto.randomUUID()}`;
    const prompt = {
      slug: "greet",
      model: "dev:echo",
      inputs: { name: { type: "string" } },
      messages: [{ role: "user", content: "Hi {{name}}" }],
    };
    await pushPrompts(server, otherTenant.id, [prompt]);

    const mine = (await (await createRun({ inputs: { name: "Ada" } }, key)).json()) as { id: string };
    const theirs = await createRun({ inputs: { name: "Ada" } }, key, otherTenant.apiKey);
    expect(theirs.status).toBe(202);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    const theirRun = (await theirs.json()) as { id: string };
    expect(theirRun.id).not.toBe(mine.id);
    // Neither tenant can read the other's run through the shared key.
    const crossRead = await api(
      { url: server.url, apiKey: otherTenant.apiKey },
      `/api/v1/promptruns/${mine.id}`,
    );
    expect(crossRead.status).toBe(404);
    expect(await countRows(server, "select count(*) as n from idempotency_keys where key = ?", key)).toBe(2);
  });

  test("a malformed key is a 400; a replay still works after a restart", async () => {
    const malformed = await createRun({ inputs: { name: "Ada" } }, "x".repeat(256));
    expect(malformed.status).toBe(400);

    const key = `durable-${crypto.randomUUID()}`;
    const original = (await (await createRun({ inputs: { name: "Durable" } }, key)).json()) as { id: string };
    server = await server.restart();
    const replay = await createRun({ inputs: { name: "Durable" } }, key);
    expect(replay.status).toBe(202);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(((await replay.json()) as { id: string }).id).toBe(original.id);
  });
});
