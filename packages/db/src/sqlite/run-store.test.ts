import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { Cost } from "@promptrun/contract";
import type {
  IdempotencyRecord,
  NewRun,
  PromptVersionRecord,
  RunCompletion,
  RunRecord,
  TenantRecord,
  WebhookDeliveryRecord,
} from "@promptrun/core";
import type { SqliteStore } from "./open.ts";
import { addTenant, newRun, openTempStore, pushPrompt } from "./test-fixtures.ts";

const at = (seconds: number) => new Date(1_700_000_000_000 + seconds * 1000);

const zeroBlock = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };
const cost: Cost = { success: { ...zeroBlock, output: 0.5, total: 0.5 }, retries: zeroBlock, total: 0.5 };

const completion = (output: string, overrides: Partial<RunCompletion> = {}): RunCompletion => ({
  output,
  tokenUsage: { input: 3, inputCached: 0, output: 2, reasoning: 0, total: 5 },
  cost,
  finishedAt: at(100),
  memory: [
    { role: "user", content: `question for ${output}` },
    { role: "assistant", content: output },
  ],
  deliveries: [],
  ...overrides,
});

const idempotencyFor = (run: NewRun, key: string, createdAt = run.createdAt): IdempotencyRecord => ({
  tenantId: run.tenantId,
  key,
  requestHash: `request-${key}`,
  runId: run.id,
  threadId: run.threadId,
  createdAt,
});

describe("SQLite RunStore", () => {
  let store: SqliteStore;
  let dispose: () => Promise<void>;
  let acme: TenantRecord;
  let other: TenantRecord;
  let version: PromptVersionRecord;
  let otherVersion: PromptVersionRecord;

  const setUp = async () => {
    ({ store, dispose } = await openTempStore());
    acme = await addTenant(store, "acme");
    other = await addTenant(store, "other");
    version = await pushPrompt(store, acme.id, "greet");
    otherVersion = await pushPrompt(store, other.id, "greet");
  };
  beforeEach(() => setUp());
  afterEach(() => dispose());

  const rowCount = (table: string): number =>
    store.raw.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()?.n ?? -1;

  test("create stores every field and its thread; get is tenant-scoped", async () => {
    const run = newRun(version, {
      channel: "support",
      priority: "onsite",
      environment: "staging",
      inputs: { name: "Ada", nested: { list: [1, 2] } },
      metadata: { customer: "42", tags: ["a", "b"] },
      encryptedEnvVars: "ciphertext",
      createdAt: at(1),
    });
    await store.runs.create(run);
    const expected: RunRecord = {
      ...run,
      status: "pending",
      startedAt: null,
      finishedAt: null,
      output: null,
      error: null,
      tokenUsage: null,
      cost: null,
      attempts: 0,
    };
    expect(await store.runs.get(acme.id, run.id)).toEqual(expected);
    expect(await store.runs.getById(run.id)).toEqual(expected);
    expect(await store.runs.get(other.id, run.id)).toBeNull();
    expect(await store.runs.getById(Bun.randomUUIDv7())).toBeNull();

    expect(await store.runs.getThread(acme.id, run.threadId)).toEqual({
      id: run.threadId,
      createdAt: at(1),
      messages: [],
    });
    expect(await store.runs.getThread(other.id, run.threadId)).toBeNull();
  });

  test("a duplicate run id is a conflict, an unknown prompt version is invalid", async () => {
    const run = newRun(version);
    await store.runs.create(run);
    await expect(store.runs.create({ ...run, threadId: Bun.randomUUIDv7() })).rejects.toMatchObject({
      code: "conflict",
    });
    await expect(
      store.runs.create(newRun(version, { promptVersionId: Bun.randomUUIDv7() })),
    ).rejects.toMatchObject({
      code: "invalid",
    });
    expect(rowCount("runs")).toBe(1);
    // The rejected runs' threads were rolled back with them.
    expect(rowCount("threads")).toBe(1);
  });

  test("1,000 concurrent creates all land; a taken idempotency key rejects only its own run", async () => {
    const taken = newRun(version);
    await store.runs.create(taken, idempotencyFor(taken, "key-taken"));

    const runs = Array.from({ length: 1000 }, () => newRun(version));
    const conflicting = runs[500]!;
    const results = await Promise.allSettled(
      runs.map((run, index) =>
        store.runs.create(
          run,
          index === 500 ? idempotencyFor(run, "key-taken") : idempotencyFor(run, `key-${index}`),
        ),
      ),
    );
    const rejected = results.flatMap((result, index) => (result.status === "rejected" ? [index] : []));
    expect(rejected).toEqual([500]);
    expect((results[500] as PromiseRejectedResult).reason).toMatchObject({ code: "conflict" });

    expect(rowCount("runs")).toBe(1000);
    expect(await store.runs.getById(conflicting.id)).toBeNull();
    expect(rowCount("threads")).toBe(1000);
    expect((await store.runs.findIdempotency(acme.id, "key-taken", at(0)))?.runId).toBe(taken.id);
    expect((await store.runs.findIdempotency(acme.id, "key-999", at(0)))?.runId).toBe(runs[999]!.id);
    expect(await store.runs.countPending(acme.id)).toBe(1000);
  });

  test("findIdempotency honours notBefore and tenants; an expired key can be taken again", async () => {
    const first = newRun(version, { createdAt: at(0) });
    await store.runs.create(first, idempotencyFor(first, "same"));
    expect((await store.runs.findIdempotency(acme.id, "same", at(-1)))?.runId).toBe(first.id);
    expect(await store.runs.findIdempotency(acme.id, "same", at(1))).toBeNull();
    expect(await store.runs.findIdempotency(other.id, "same", at(-1))).toBeNull();

    // Another tenant may use the same key.
    const theirs = newRun(otherVersion, { createdAt: at(1) });
    await store.runs.create(theirs, idempotencyFor(theirs, "same"));

    // Without an expiry the key stays taken, however old.
    const noExpiry = newRun(version, { createdAt: at(1_000_000) });
    await expect(store.runs.create(noExpiry, idempotencyFor(noExpiry, "same"))).rejects.toMatchObject({
      code: "conflict",
    });
    const notExpiredYet = newRun(version, { createdAt: at(59) });
    await expect(
      store.runs.create(notExpiredYet, idempotencyFor(notExpiredYet, "same"), {
        idempotencyExpiredBefore: at(0),
      }),
    ).rejects.toMatchObject({ code: "conflict" });
    const later = newRun(version, { createdAt: at(61) });
    await store.runs.create(later, idempotencyFor(later, "same"), { idempotencyExpiredBefore: at(1) });
    expect((await store.runs.findIdempotency(acme.id, "same", at(0)))?.runId).toBe(later.id);
    expect(await store.runs.getById(noExpiry.id)).toBeNull();
    expect(await store.runs.getById(later.id)).not.toBeNull();
  });

  test("list pages newest first with filters, never across tenants", async () => {
    const thread = Bun.randomUUIDv7();
    const created: NewRun[] = [];
    for (let index = 0; index < 7; index++) {
      const run = newRun(version, {
        threadId: index < 4 ? thread : Bun.randomUUIDv7(),
        channel: index % 2 === 0 ? "even" : "odd",
        // Two runs share each timestamp: the id breaks the tie.
        createdAt: at(Math.floor(index / 2)),
      });
      created.push(run);
      await store.runs.create(run);
    }
    await store.runs.create(newRun(otherVersion, { threadId: thread, createdAt: at(50) }));
    const newestFirst = [...created]
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
      .map((run) => run.id);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof store.runs.list>> = await store.runs.list(
        acme.id,
        {},
        { cursor, limit: 3 },
      );
      seen.push(...page.items.map((run) => run.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(newestFirst);

    const inThread = await store.runs.list(acme.id, { threadId: thread }, { limit: 50 });
    expect(inThread.items).toHaveLength(4);
    const evenInThread = await store.runs.list(acme.id, { threadId: thread, channel: "even" }, { limit: 50 });
    expect(evenInThread.items.map((run) => run.channel)).toEqual(["even", "even"]);
    expect((await store.runs.list(acme.id, { slug: "other" }, { limit: 50 })).items).toEqual([]);

    await store.runs.complete(created[0]!.id, completion("done"));
    const completed = await store.runs.list(acme.id, { status: "completed" }, { limit: 50 });
    expect(completed.items.map((run) => run.id)).toEqual([created[0]!.id]);
    expect((await store.runs.list(acme.id, { status: "pending" }, { limit: 50 })).items).toHaveLength(6);
    expect((await store.runs.list(other.id, {}, { limit: 50 })).items).toHaveLength(1);
  });

  test("listPending returns every tenant's pending runs oldest first; countPending is per tenant", async () => {
    const late = newRun(version, { createdAt: at(30) });
    const early = newRun(otherVersion, { createdAt: at(10) });
    const middle = newRun(version, { createdAt: at(20) });
    const done = newRun(version, { createdAt: at(5) });
    for (const run of [late, early, middle, done]) await store.runs.create(run);
    await store.runs.fail(done.id, { error: "boom", cost: null, finishedAt: at(40), deliveries: [] });

    expect((await store.runs.listPending()).map((run) => run.id)).toEqual([early.id, middle.id, late.id]);
    expect(await store.runs.countPending(acme.id)).toBe(2);
    expect(await store.runs.countPending(other.id)).toBe(1);
  });

  test("markStarted keeps the first start and counts attempts, on pending runs only", async () => {
    const run = newRun(version);
    await store.runs.create(run);
    await store.runs.markStarted(run.id, at(3), 1);
    await store.runs.markStarted(run.id, at(8), 2);
    expect(await store.runs.getById(run.id)).toMatchObject({
      startedAt: at(3),
      attempts: 2,
      status: "pending",
    });
    await store.runs.fail(run.id, { error: "x", cost: null, finishedAt: at(9), deliveries: [] });
    await store.runs.markStarted(run.id, at(10), 3);
    expect(await store.runs.getById(run.id)).toMatchObject({
      startedAt: at(3),
      attempts: 2,
      status: "failed",
    });
  });

  test("complete is a compare-and-set: memory, deliveries and secret erasure happen once", async () => {
    const run = newRun(version, { encryptedEnvVars: "ciphertext", channel: "chat" });
    await store.runs.create(run);
    const webhookDelivery = await deliveryFor(run.id);

    expect(await store.runs.complete(run.id, completion("first", { deliveries: [webhookDelivery] }))).toBe(
      true,
    );
    expect(await store.runs.getById(run.id)).toMatchObject({
      status: "completed",
      output: "first",
      tokenUsage: { input: 3, inputCached: 0, output: 2, reasoning: 0, total: 5 },
      cost,
      error: null,
      finishedAt: at(100),
      encryptedEnvVars: null,
    });
    expect(await store.webhooks.getDelivery(acme.id, webhookDelivery.id)).toEqual(webhookDelivery);

    const again = completion("second", { deliveries: [{ ...webhookDelivery, id: Bun.randomUUIDv7() }] });
    expect(await store.runs.complete(run.id, again)).toBe(false);
    expect(
      await store.runs.fail(run.id, { error: "late", cost: null, finishedAt: at(200), deliveries: [] }),
    ).toBe(false);
    expect((await store.runs.getById(run.id))?.output).toBe("first");
    expect(await store.runs.memory(acme.id, run.threadId, "chat")).toEqual([
      { role: "user", content: "question for first" },
      { role: "assistant", content: "first" },
    ]);
    expect(rowCount("webhook_deliveries")).toBe(1);
  });

  test("concurrent completions of one run: exactly one wins", async () => {
    const run = newRun(version);
    await store.runs.create(run);
    const outcomes = await Promise.all([
      store.runs.complete(run.id, completion("a")),
      store.runs.complete(run.id, completion("b")),
      store.runs.fail(run.id, { error: "c", cost: null, finishedAt: at(1), deliveries: [] }),
    ]);
    expect(outcomes).toEqual([true, false, false]);
    expect(await store.runs.memory(acme.id, run.threadId, "default")).toHaveLength(2);
  });

  test("fail ends a pending run once, keeps its cost, erases its secrets", async () => {
    const run = newRun(version, { encryptedEnvVars: "ciphertext" });
    await store.runs.create(run);
    const webhookDelivery = await deliveryFor(run.id, "run.failed");
    expect(
      await store.runs.fail(run.id, {
        error: "provider said no",
        cost,
        finishedAt: at(9),
        deliveries: [webhookDelivery],
      }),
    ).toBe(true);
    expect(await store.runs.getById(run.id)).toMatchObject({
      status: "failed",
      error: "provider said no",
      cost,
      tokenUsage: null,
      output: null,
      finishedAt: at(9),
      encryptedEnvVars: null,
    });
    expect(await store.webhooks.getDelivery(acme.id, webhookDelivery.id)).toEqual(webhookDelivery);
    expect(
      await store.runs.fail(run.id, { error: "again", cost: null, finishedAt: at(10), deliveries: [] }),
    ).toBe(false);
    expect(await store.runs.complete(run.id, completion("too late"))).toBe(false);
    expect(await store.runs.memory(acme.id, run.threadId, "default")).toEqual([]);
  });

  test("memory returns a channel's completed exchanges oldest first, per thread and tenant", async () => {
    const thread = Bun.randomUUIDv7();
    const one = newRun(version, { threadId: thread, channel: "a", createdAt: at(1) });
    const two = newRun(version, { threadId: thread, channel: "a", createdAt: at(2) });
    const side = newRun(version, { threadId: thread, channel: "b", createdAt: at(3) });
    const pending = newRun(version, { threadId: thread, channel: "a", createdAt: at(4) });
    const foreign = newRun(otherVersion, { threadId: thread, channel: "a", createdAt: at(5) });
    for (const run of [one, two, side, pending, foreign]) await store.runs.create(run);
    await store.runs.complete(one.id, completion("one", { finishedAt: at(10) }));
    await store.runs.complete(side.id, completion("side", { finishedAt: at(11) }));
    await store.runs.complete(two.id, completion("two", { finishedAt: at(12) }));
    await store.runs.complete(foreign.id, completion("foreign", { finishedAt: at(13) }));

    expect(await store.runs.memory(acme.id, thread, "a")).toEqual([
      { role: "user", content: "question for one" },
      { role: "assistant", content: "one" },
      { role: "user", content: "question for two" },
      { role: "assistant", content: "two" },
    ]);
    expect((await store.runs.memory(acme.id, thread, "b")).map((message) => message.content)).toEqual([
      "question for side",
      "side",
    ]);
    expect((await store.runs.memory(other.id, thread, "a")).map((message) => message.content)).toEqual([
      "question for foreign",
      "foreign",
    ]);
    expect(await store.runs.memory(acme.id, Bun.randomUUIDv7(), "a")).toEqual([]);

    const threadView = await store.runs.getThread(acme.id, thread);
    expect(threadView?.messages.map((message) => [message.channel, message.runId, message.content])).toEqual([
      ["a", one.id, "question for one"],
      ["a", one.id, "one"],
      ["b", side.id, "question for side"],
      ["b", side.id, "side"],
      ["a", two.id, "question for two"],
      ["a", two.id, "two"],
    ]);
    expect(threadView?.messages[0]?.createdAt).toEqual(at(10));
  });

  test("updateEncryptedEnvVars re-encrypts a pending run and never revives an ended one's", async () => {
    const live = newRun(version, { encryptedEnvVars: "old" });
    const ended = newRun(version, { encryptedEnvVars: "old" });
    await store.runs.create(live);
    await store.runs.create(ended);
    await store.runs.complete(ended.id, completion("done"));
    await store.runs.updateEncryptedEnvVars(live.id, "new");
    await store.runs.updateEncryptedEnvVars(ended.id, "new");
    expect((await store.runs.getById(live.id))?.encryptedEnvVars).toBe("new");
    expect((await store.runs.getById(ended.id))?.encryptedEnvVars).toBeNull();
  });

  /** A webhook of the run's tenant and a delivery row for `runId`. */
  const deliveryFor = async (
    runId: string,
    eventType: WebhookDeliveryRecord["eventType"] = "run.completed",
  ): Promise<WebhookDeliveryRecord> => {
    const environment = await store.environments.ensure(acme.id, "production", Bun.randomUUIDv7(), at(0));
    const webhookId = Bun.randomUUIDv7();
    await store.webhooks.create({
      id: webhookId,
      tenantId: acme.id,
      environmentId: environment.id,
      environment: environment.name,
      url: "https://example.com/hook",
      encryptedSecret: "secret",
      events: ["run.completed", "run.failed"],
      enabled: true,
      failureStreak: 0,
      createdAt: at(0),
    });
    return {
      id: Bun.randomUUIDv7(),
      webhookId,
      tenantId: acme.id,
      runId,
      eventType,
      payload: JSON.stringify({ type: eventType }),
      status: "pending",
      attempts: 0,
      nextAttemptAt: at(100),
      createdAt: at(100),
    };
  };
});
