import { describe, expect, test } from "bun:test";
import { PromptrunError } from "../errors.ts";
import type { NewRun, WebhookDeliveryRecord } from "../ports.ts";
import { createMemoryStore } from "./memory-store.ts";

const at = new Date("2030-01-01T00:00:00.000Z");
const later = (seconds: number) => new Date(at.getTime() + seconds * 1000);
const uuid = (n: number) => `00000000-0000-7000-8000-${String(n).padStart(12, "0")}`;
const definition = {
  model: "dev:echo",
  params: {},
  inputs: {},
  messages: [{ role: "user" as const, content: "hi" }],
};

const newRun = (n: number, overrides: Partial<NewRun> = {}): NewRun => ({
  id: uuid(n),
  tenantId: "tenant-a",
  threadId: uuid(900),
  channel: "default",
  promptId: uuid(800),
  promptVersionId: uuid(801),
  promptSlug: "greet",
  promptVersion: 1,
  priority: "normal",
  environment: "production",
  inputs: {},
  metadata: {},
  encryptedEnvVars: "cipher",
  createdAt: later(n),
  ...overrides,
});

const delivery = (id: number, runId: string): WebhookDeliveryRecord => ({
  id: uuid(id),
  webhookId: uuid(700),
  tenantId: "tenant-a",
  runId,
  eventType: "run.completed",
  payload: "{}",
  status: "pending",
  attempts: 0,
  nextAttemptAt: at,
  createdAt: at,
});

describe("memory store: prompts", () => {
  const push = (
    store: ReturnType<typeof createMemoryStore>,
    content: string,
    n: number,
    tags: string[] = [],
  ) =>
    store.prompts.pushVersion({
      tenantId: "tenant-a",
      slug: "greet",
      definition,
      contentHash: content,
      tags,
      newPromptId: uuid(n),
      newVersionId: uuid(n + 1),
      at: later(n),
    });

  test("identical push creates nothing, a change creates the next version, tags move", async () => {
    const store = createMemoryStore();
    const first = await push(store, "h1", 10, ["production"]);
    expect(first).toMatchObject({ created: true, tags: ["production"] });
    expect(first.version.version).toBe(1);
    const same = await push(store, "h1", 20);
    expect(same.created).toBe(false);
    expect(same.version.id).toBe(first.version.id);
    const second = await push(store, "h2", 30, ["production"]);
    expect(second.version.version).toBe(2);
    expect(second.version.promptId).toBe(first.version.promptId);
    expect(await store.prompts.tagsOf(first.version.id)).toEqual([]);
    const byTag = await store.prompts.resolveVersion("tenant-a", "greet", { kind: "tag", tag: "production" });
    expect(byTag?.version).toBe(2);
    expect((await store.prompts.resolveVersion("tenant-a", "greet", { kind: "latest" }))?.version).toBe(2);
    expect(
      await store.prompts.resolveVersion("tenant-b", "greet", { kind: "id", id: first.version.id }),
    ).toBeNull();
    const tagged = await store.prompts.setTag(
      "tenant-a",
      "greet",
      { kind: "number", version: 1 },
      "old",
      later(40),
    );
    expect(tagged?.version).toBe(1);
    expect(await store.prompts.tagsOf(first.version.id)).toEqual(["old"]);
  });

  test("versions are listed newest first with a cursor", async () => {
    const store = createMemoryStore();
    for (let index = 0; index < 5; index++) await push(store, `h${index}`, 10 * (index + 1));
    const first = await store.prompts.listVersions("tenant-a", "greet", { limit: 2 });
    expect(first.items.map((version) => version.version)).toEqual([5, 4]);
    const second = await store.prompts.listVersions("tenant-a", "greet", {
      limit: 2,
      cursor: first.nextCursor,
    });
    expect(second.items.map((version) => version.version)).toEqual([3, 2]);
    const third = await store.prompts.listVersions("tenant-a", "greet", {
      limit: 2,
      cursor: second.nextCursor,
    });
    expect(third.items.map((version) => version.version)).toEqual([1]);
    expect(third.nextCursor).toBeNull();
    await expect(
      store.prompts.listVersions("tenant-a", "greet", { limit: 2, cursor: "garbage!" }),
    ).rejects.toThrow("malformed cursor");
  });
});

describe("memory store: runs", () => {
  test("complete and fail are compare-and-set, erase envVars and write memory and outbox", async () => {
    const store = createMemoryStore();
    await store.runs.create(newRun(1));
    await store.runs.create(newRun(2));
    expect(await store.runs.countPending("tenant-a")).toBe(2);
    const usage = { input: 1, inputCached: 0, output: 1, reasoning: 0, total: 2 };
    const block = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };
    const cost = { success: block, retries: block, total: 0 };
    const completion = {
      output: "hello",
      tokenUsage: usage,
      cost,
      finishedAt: later(5),
      memory: [
        { role: "user" as const, content: "hi" },
        { role: "assistant" as const, content: "hello" },
      ],
      deliveries: [delivery(50, uuid(1))],
    };
    expect(await store.runs.complete(uuid(1), completion)).toBe(true);
    expect(await store.runs.complete(uuid(1), completion)).toBe(false);
    expect(
      await store.runs.fail(uuid(1), { error: "x", cost: null, finishedAt: later(6), deliveries: [] }),
    ).toBe(false);
    const completed = await store.runs.get("tenant-a", uuid(1));
    expect(completed).toMatchObject({
      status: "completed",
      output: "hello",
      encryptedEnvVars: null,
      error: null,
    });
    expect(await store.runs.memory("tenant-a", uuid(900), "default")).toEqual(completion.memory);
    expect(await store.runs.memory("tenant-a", uuid(900), "other")).toEqual([]);
    expect(await store.webhooks.dueDeliveries(later(10), 10)).toHaveLength(1);

    expect(
      await store.runs.fail(uuid(2), { error: "boom", cost: null, finishedAt: later(7), deliveries: [] }),
    ).toBe(true);
    expect(await store.runs.get("tenant-a", uuid(2))).toMatchObject({
      status: "failed",
      output: null,
      tokenUsage: null,
      encryptedEnvVars: null,
    });
    expect(await store.runs.countPending("tenant-a")).toBe(0);
    expect(await store.runs.get("tenant-b", uuid(1))).toBeNull();
  });

  test("memory is bounded like the SQL stores: newest whole exchanges within N messages and B bytes", async () => {
    const store = createMemoryStore();
    const block = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };
    const outputs = ["e1", "e2", "é3", "e4"];
    for (const [index, output] of outputs.entries()) {
      for (const [offset, channel] of [
        [0, "a"],
        [50, "b"],
      ] as const) {
        await store.runs.create(newRun(index + 1 + offset, { channel }));
        await store.runs.complete(uuid(index + 1 + offset), {
          output,
          tokenUsage: { input: 1, inputCached: 0, output: 1, reasoning: 0, total: 2 },
          cost: { success: block, retries: block, total: 0 },
          finishedAt: later(5),
          memory: [
            { role: "user", content: `q ${output}` },
            { role: "assistant", content: output },
          ],
          deliveries: [],
        });
      }
    }
    const contents = async (maxMessages: number, maxBytes: number) =>
      (await store.runs.memory("tenant-a", uuid(900), "a", { maxMessages, maxBytes })).map(
        (message) => message.content,
      );
    expect(await contents(1_000, 1_000)).toEqual(["q e1", "e1", "q e2", "e2", "q é3", "é3", "q e4", "e4"]);
    expect(await contents(3, 1_000)).toEqual(["q e4", "e4"]);
    // e4's exchange is 4 + 2 bytes, é3's 5 + 3.
    expect(await contents(1_000, 13)).toEqual(["q e4", "e4"]);
    expect(await contents(1_000, 14)).toEqual(["q é3", "é3", "q e4", "e4"]);
    expect(await contents(1_000, 5)).toEqual([]);
  });

  test("idempotency: a taken key conflicts, an expired one is replaced", async () => {
    const store = createMemoryStore();
    const record = {
      tenantId: "tenant-a",
      key: "k",
      requestHash: "h",
      runId: uuid(1),
      threadId: uuid(900),
      createdAt: at,
    };
    await store.runs.create(newRun(1), record);
    const second = store.runs.create(newRun(2), { ...record, runId: uuid(2), createdAt: later(1) });
    await expect(second).rejects.toBeInstanceOf(PromptrunError);
    expect(await store.runs.get("tenant-a", uuid(2))).toBeNull();
    expect((await store.runs.findIdempotency("tenant-a", "k", at))?.runId).toBe(uuid(1));
    expect(await store.runs.findIdempotency("tenant-a", "k", later(1))).toBeNull();
    await store.runs.create(
      newRun(3),
      { ...record, runId: uuid(3), createdAt: later(100) },
      {
        idempotencyExpiredBefore: later(50),
      },
    );
    expect((await store.runs.findIdempotency("tenant-a", "k", at))?.runId).toBe(uuid(3));
  });

  test("lists newest first with filters and a cursor; records are copies", async () => {
    const store = createMemoryStore();
    for (let n = 1; n <= 5; n++) await store.runs.create(newRun(n, { channel: n % 2 ? "odd" : "even" }));
    const odd = await store.runs.list("tenant-a", { channel: "odd" }, { limit: 2 });
    expect(odd.items.map((run) => run.id)).toEqual([uuid(5), uuid(3)]);
    const rest = await store.runs.list("tenant-a", { channel: "odd" }, { limit: 2, cursor: odd.nextCursor });
    expect(rest.items.map((run) => run.id)).toEqual([uuid(1)]);
    expect(rest.nextCursor).toBeNull();
    expect((await store.runs.listPending()).map((run) => run.id)).toEqual([1, 2, 3, 4, 5].map(uuid));
    const copy = await store.runs.get("tenant-a", uuid(1));
    if (copy) copy.status = "completed";
    expect((await store.runs.get("tenant-a", uuid(1)))?.status).toBe("pending");
  });
});

describe("memory store: tenants and keys", () => {
  test("revokes by id or by a unique prefix only", async () => {
    const store = createMemoryStore();
    await store.tenants.create({ id: "tenant-a", name: "A", subscriptionActive: true, createdAt: at });
    const key = (id: number, prefix: string) => ({
      id: uuid(id),
      tenantId: "tenant-a",
      prefix,
      hash: `hash-${id}`,
      createdAt: at,
      revokedAt: null,
      lastUsedAt: null,
    });
    await store.tenants.createApiKey(key(1, "pr_live_aaaa1"));
    await store.tenants.createApiKey(key(2, "pr_live_aaaa2"));
    expect(await store.tenants.revokeApiKeys({ prefix: "pr_live_aaaa" }, later(1))).toEqual([]);
    const revoked = await store.tenants.revokeApiKeys({ prefix: "pr_live_aaaa2" }, later(1));
    expect(revoked.map((record) => record.id)).toEqual([uuid(2)]);
    const found = await store.tenants.findApiKeyByHash("hash-2");
    expect(found?.key.revokedAt).toEqual(later(1));
    expect(found?.tenant.name).toBe("A");
    // Once the other is revoked, the shorter prefix is unique.
    expect(await store.tenants.revokeApiKeys({ prefix: "pr_live_aaaa" }, later(2))).toHaveLength(1);
  });
});
