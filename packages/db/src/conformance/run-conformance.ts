import { beforeEach, expect, test } from "bun:test";
import type { ContentPart, Cost } from "@promptrun/contract";
import type {
  MemoryBound,
  NewRun,
  PromptVersionRecord,
  RunCompletion,
  TenantRecord,
  WebhookDeliveryRecord,
} from "@promptrun/core";
import {
  addTenant,
  at,
  idempotencyFor,
  newRun,
  pendingRunRecord,
  pushPrompt,
  stateOf,
} from "@promptrun/core/testing";
import type { ConformanceContext } from "./conformance-context.ts";

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
  steps: [],
  ...overrides,
});

export const runConformance = ({ store }: ConformanceContext): void => {
  let acme: TenantRecord;
  let other: TenantRecord;
  let version: PromptVersionRecord;
  let otherVersion: PromptVersionRecord;
  beforeEach(async () => {
    acme = await addTenant(store(), "acme");
    other = await addTenant(store(), "other");
    version = await pushPrompt(store(), acme.id, "greet");
    otherVersion = await pushPrompt(store(), other.id, "greet");
  });

  /** A webhook of acme's production environment and a delivery row for `runId`. */
  const deliveryFor = async (
    runId: string,
    eventType: WebhookDeliveryRecord["eventType"] = "run.completed",
  ): Promise<WebhookDeliveryRecord> => {
    const environment = await store().environments.ensure(acme.id, "production", Bun.randomUUIDv7(), at(0));
    const webhookId = Bun.randomUUIDv7();
    await store().webhooks.create({
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
      eventId: null,
      eventType,
      payload: JSON.stringify({ type: eventType, data: { z: 1, a: 2 } }),
      status: "pending",
      attempts: 0,
      nextAttemptAt: at(100),
      createdAt: at(100),
    };
  };

  test("create stores every field and its thread; reads are tenant-scoped", async () => {
    const run = newRun(version, {
      channel: "support",
      priority: "onsite",
      environment: "staging",
      inputs: { name: "Ada", nested: { list: [1, 2], flag: true, none: null } },
      // Key order is kept: metadata comes back as the client sent it.
      metadata: { zebra: "1", customer: "42", tags: ["b", "a"] },
      encryptedEnvVars: "ciphertext",
      createdAt: at(1),
    });
    await store().runs.create(run);
    const expected = pendingRunRecord(run);
    const stored = await store().runs.get(acme.id, run.id);
    expect(stored).toEqual(expected);
    expect(Object.keys(stored?.metadata ?? {})).toEqual(["zebra", "customer", "tags"]);
    expect(await store().runs.getById(run.id)).toEqual(expected);
    expect(await store().runs.get(other.id, run.id)).toBeNull();
    expect(await store().runs.getById(Bun.randomUUIDv7())).toBeNull();
    expect(await store().runs.getById("not-a-uuid")).toBeNull();

    expect(await store().runs.getThread(acme.id, run.threadId)).toEqual({
      id: run.threadId,
      createdAt: at(1),
      messages: [],
    });
    expect(await store().runs.getThread(other.id, run.threadId)).toBeNull();
  });

  test("runs of one thread share it; the thread keeps its first creation time", async () => {
    const threadId = Bun.randomUUIDv7();
    const first = newRun(version, { threadId, createdAt: at(1) });
    const second = newRun(version, { threadId, createdAt: at(2) });
    await Promise.all([store().runs.create(first), store().runs.create(second)]);
    await store().runs.create(newRun(version, { threadId, createdAt: at(3) }));
    expect((await store().runs.getThread(acme.id, threadId))?.createdAt).toEqual(at(1));
    expect((await store().runs.list(acme.id, { threadId }, { limit: 10 })).items).toHaveLength(3);
  });

  test("a duplicate run id is a conflict, an unknown prompt version is invalid; both leave nothing", async () => {
    const run = newRun(version);
    await store().runs.create(run);
    const duplicate = { ...run, threadId: Bun.randomUUIDv7() };
    await expect(store().runs.create(duplicate)).rejects.toMatchObject({ code: "conflict" });
    const orphan = newRun(version, { promptVersionId: Bun.randomUUIDv7() });
    await expect(store().runs.create(orphan)).rejects.toMatchObject({ code: "invalid" });
    expect(await store().runs.countPending(acme.id)).toBe(1);
    expect(await store().runs.getById(orphan.id)).toBeNull();
    // The rejected runs' threads were rolled back with them.
    expect(await store().runs.getThread(acme.id, duplicate.threadId)).toBeNull();
    expect(await store().runs.getThread(acme.id, orphan.threadId)).toBeNull();
  });

  test("a faulty create in a batch rejects alone", async () => {
    const good = Array.from({ length: 20 }, () => newRun(version));
    const faulty = newRun(version, { promptVersionId: Bun.randomUUIDv7() });
    const results = await Promise.allSettled([
      ...good.slice(0, 10).map((run) => store().runs.create(run)),
      store().runs.create(faulty),
      ...good.slice(10).map((run) => store().runs.create(run)),
    ]);
    expect(results.map((result) => result.status)).toEqual([
      ...Array(10).fill("fulfilled"),
      "rejected",
      ...Array(10).fill("fulfilled"),
    ]);
    expect((results[10] as PromiseRejectedResult).reason).toMatchObject({ code: "invalid" });
    expect(await store().runs.countPending(acme.id)).toBe(20);
    expect(await store().runs.getThread(acme.id, faulty.threadId)).toBeNull();
  });

  test("1,000 concurrent creates all land; a taken idempotency key rejects only its own run", async () => {
    const taken = newRun(version);
    await store().runs.create(taken, idempotencyFor(taken, "key-taken"));

    const runs = Array.from({ length: 1000 }, (_, index) =>
      // Every other run shares a thread with its neighbour.
      newRun(version, { threadId: index % 2 === 0 ? Bun.randomUUIDv7() : undefined }),
    );
    for (let index = 1; index < runs.length; index += 2) runs[index]!.threadId = runs[index - 1]!.threadId;
    const conflicting = runs[500]!;
    const results = await Promise.allSettled(
      runs.map((run, index) =>
        store().runs.create(
          run,
          index === 500 ? idempotencyFor(run, "key-taken") : idempotencyFor(run, `key-${index}`),
        ),
      ),
    );
    const rejected = results.flatMap((result, index) => (result.status === "rejected" ? [index] : []));
    expect(rejected).toEqual([500]);
    expect((results[500] as PromiseRejectedResult).reason).toMatchObject({ code: "conflict" });

    expect(await store().runs.countPending(acme.id)).toBe(1000);
    expect(await store().runs.getById(conflicting.id)).toBeNull();
    // Its thread stays: its neighbour's run uses it.
    expect(await store().runs.getThread(acme.id, conflicting.threadId)).not.toBeNull();
    expect((await store().runs.findIdempotency(acme.id, "key-taken", at(-1)))?.runId).toBe(taken.id);
    expect(await store().runs.findIdempotency(acme.id, "key-999", at(-1))).toEqual(
      idempotencyFor(runs[999]!, "key-999"),
    );
  });

  test("of two creates with one key in the same turn, the first wins and the other leaves nothing", async () => {
    const first = newRun(version);
    const second = newRun(version);
    const results = await Promise.allSettled([
      store().runs.create(first, idempotencyFor(first, "twice")),
      store().runs.create(second, idempotencyFor(second, "twice")),
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected"]);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: "conflict" });
    expect((await store().runs.findIdempotency(acme.id, "twice", at(-1)))?.runId).toBe(first.id);
    expect(await store().runs.getById(second.id)).toBeNull();
    expect(await store().runs.getThread(acme.id, second.threadId)).toBeNull();
  });

  test("findIdempotency honours notBefore and tenants; an expired key can be taken again", async () => {
    const first = newRun(version, { createdAt: at(0) });
    await store().runs.create(first, idempotencyFor(first, "same"));
    expect((await store().runs.findIdempotency(acme.id, "same", at(-1)))?.runId).toBe(first.id);
    expect((await store().runs.findIdempotency(acme.id, "same", at(0)))?.runId).toBe(first.id);
    expect(await store().runs.findIdempotency(acme.id, "same", at(1))).toBeNull();
    expect(await store().runs.findIdempotency(other.id, "same", at(-1))).toBeNull();

    // Another tenant may use the same key.
    const theirs = newRun(otherVersion, { createdAt: at(1) });
    await store().runs.create(theirs, idempotencyFor(theirs, "same"));

    // Without an expiry the key stays taken, however old.
    const noExpiry = newRun(version, { createdAt: at(1_000_000) });
    await expect(store().runs.create(noExpiry, idempotencyFor(noExpiry, "same"))).rejects.toMatchObject({
      code: "conflict",
    });
    // A record created exactly at the expiry instant has not expired.
    const notExpiredYet = newRun(version, { createdAt: at(59) });
    await expect(
      store().runs.create(notExpiredYet, idempotencyFor(notExpiredYet, "same"), {
        idempotencyExpiredBefore: at(0),
      }),
    ).rejects.toMatchObject({ code: "conflict" });
    const later = newRun(version, { createdAt: at(61) });
    await store().runs.create(later, idempotencyFor(later, "same"), { idempotencyExpiredBefore: at(1) });
    expect(await store().runs.findIdempotency(acme.id, "same", at(0))).toEqual(idempotencyFor(later, "same"));
    expect(await store().runs.getById(noExpiry.id)).toBeNull();
    expect(await store().runs.getById(notExpiredYet.id)).toBeNull();
    expect(await store().runs.getById(later.id)).not.toBeNull();
    // The replaced record's run stays.
    expect(await store().runs.getById(first.id)).not.toBeNull();
    expect((await store().runs.findIdempotency(other.id, "same", at(0)))?.runId).toBe(theirs.id);
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
      await store().runs.create(run);
    }
    await store().runs.create(newRun(otherVersion, { threadId: thread, createdAt: at(50) }));
    const newestFirst = [...created]
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
      .map((run) => run.id);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<ReturnType<typeof store>["runs"]["list"]>> = await store().runs.list(
        acme.id,
        {},
        { cursor, limit: 3 },
      );
      seen.push(...page.items.map((run) => run.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(newestFirst);

    const inThread = await store().runs.list(acme.id, { threadId: thread }, { limit: 50 });
    expect(inThread.items).toHaveLength(4);
    const evenInThread = await store().runs.list(
      acme.id,
      { threadId: thread, channel: "even" },
      { limit: 50 },
    );
    expect(evenInThread.items.map((run) => run.channel)).toEqual(["even", "even"]);
    expect((await store().runs.list(acme.id, { slug: "other" }, { limit: 50 })).items).toEqual([]);
    expect((await store().runs.list(acme.id, { slug: "greet" }, { limit: 50 })).items).toHaveLength(7);

    await store().runs.complete(created[0]!.id, completion("done"));
    const completed = await store().runs.list(acme.id, { status: "completed" }, { limit: 50 });
    expect(completed.items.map((run) => run.id)).toEqual([created[0]!.id]);
    expect((await store().runs.list(acme.id, { status: "pending" }, { limit: 50 })).items).toHaveLength(6);
    expect((await store().runs.list(other.id, {}, { limit: 50 })).items).toHaveLength(1);
    await expect(store().runs.list(acme.id, {}, { cursor: "garbage", limit: 2 })).rejects.toMatchObject({
      code: "invalid",
    });
  });

  test("pendingOutline counts pending runs per tenant and class; listPendingPage pages one class with channel predecessors", async () => {
    const thread = Bun.randomUUIDv7();
    const inChat = (createdAt: Date, priority: NewRun["priority"]) =>
      newRun(version, { threadId: thread, channel: "chat", createdAt, priority });
    const chatLow = inChat(at(1), "low");
    const chatOnsite = inChat(at(2), "onsite");
    const chatNormal = inChat(at(3), "normal");
    const otherChannel = newRun(version, { threadId: thread, channel: "side", createdAt: at(3) });
    const sameTime = newRun(version, { createdAt: at(3) });
    const later = newRun(version, { createdAt: at(4) });
    const done = newRun(version, { threadId: thread, channel: "chat", createdAt: at(0) });
    const elsewhere = newRun(otherVersion, { createdAt: at(1) });
    const all = [chatLow, chatOnsite, chatNormal, otherChannel, sameTime, later, done, elsewhere];
    for (const run of all) await store().runs.create(run);
    await store().runs.fail(done.id, { error: "boom", cost: null, finishedAt: at(40), deliveries: [] });

    const outline = await store().runs.pendingOutline();
    const byKey = (rows: typeof outline) =>
      rows.map((row) => `${row.tenantId === acme.id ? "acme" : "other"} ${row.priority} ${row.count}`).sort();
    expect(byKey(outline)).toEqual(["acme low 1", "acme normal 4", "acme onsite 1", "other normal 1"]);

    const pageOf = async (after: { createdAt: Date; id: string } | null, limit: number) =>
      (await store().runs.listPendingPage(acme.id, "normal", after, limit)).map((row) => [
        row.run.id,
        row.channelPredecessor,
      ]);
    // (createdAt, id) order: the two runs created at at(3) by id.
    const atThree = [chatNormal, otherChannel, sameTime].sort((a, b) => (a.id < b.id ? -1 : 1));
    const predecessor = (run: NewRun) => (run === chatNormal ? chatOnsite.id : null);
    const expected = [...atThree, later].map((run) => [run.id, predecessor(run)]);
    expect(await pageOf(null, 10)).toEqual(expected);
    expect(await pageOf(null, 2)).toEqual(expected.slice(0, 2));
    const second = atThree[1]!;
    expect(await pageOf({ createdAt: second.createdAt, id: second.id }, 10)).toEqual(expected.slice(2));
    expect(await pageOf({ createdAt: at(4), id: later.id }, 10)).toEqual([]);
    const [onsite] = await store().runs.listPendingPage(acme.id, "onsite", null, 10);
    expect(onsite).toMatchObject({
      run: { id: chatOnsite.id, priority: "onsite" },
      channelPredecessor: chatLow.id,
    });
    expect(await store().runs.listPendingPage(other.id, "low", null, 10)).toEqual([]);
  });

  test("listPending returns every tenant's pending runs oldest first; countPending is per tenant", async () => {
    const late = newRun(version, { createdAt: at(30) });
    const early = newRun(otherVersion, { createdAt: at(10) });
    const middle = newRun(version, { createdAt: at(20) });
    const done = newRun(version, { createdAt: at(5) });
    for (const run of [late, early, middle, done]) await store().runs.create(run);
    await store().runs.fail(done.id, { error: "boom", cost: null, finishedAt: at(40), deliveries: [] });

    expect((await store().runs.listPending()).map((run) => run.id)).toEqual([early.id, middle.id, late.id]);
    expect(await store().runs.countPending(acme.id)).toBe(2);
    expect(await store().runs.countPending(other.id)).toBe(1);
    expect(await store().runs.countPending(Bun.randomUUIDv7())).toBe(0);
  });

  test("markStarted keeps the first start and counts attempts, on pending runs only", async () => {
    const run = newRun(version);
    await store().runs.create(run);
    await store().runs.markStarted(run.id, at(3), 1);
    await store().runs.markStarted(run.id, at(8), 2);
    expect(await store().runs.getById(run.id)).toMatchObject({
      startedAt: at(3),
      attempts: 2,
      status: "pending",
    });
    await store().runs.fail(run.id, { error: "x", cost: null, finishedAt: at(9), deliveries: [] });
    await store().runs.markStarted(run.id, at(10), 3);
    expect(await store().runs.getById(run.id)).toMatchObject({
      startedAt: at(3),
      attempts: 2,
      status: "failed",
    });
  });

  test("complete is a compare-and-set: memory, deliveries and secret erasure happen once", async () => {
    const run = newRun(version, { encryptedEnvVars: "ciphertext", channel: "chat" });
    await store().runs.create(run);
    const webhookDelivery = await deliveryFor(run.id);

    expect(await store().runs.complete(run.id, completion("first", { deliveries: [webhookDelivery] }))).toBe(
      true,
    );
    expect(await store().runs.getById(run.id)).toEqual({
      ...pendingRunRecord(run),
      status: "completed",
      output: "first",
      tokenUsage: { input: 3, inputCached: 0, output: 2, reasoning: 0, total: 5 },
      cost,
      finishedAt: at(100),
      encryptedEnvVars: null,
    });
    expect(await store().webhooks.getDelivery(acme.id, webhookDelivery.id)).toEqual(stateOf(webhookDelivery));

    const secondDelivery = { ...webhookDelivery, id: Bun.randomUUIDv7() };
    expect(await store().runs.complete(run.id, completion("second", { deliveries: [secondDelivery] }))).toBe(
      false,
    );
    expect(
      await store().runs.fail(run.id, { error: "late", cost: null, finishedAt: at(200), deliveries: [] }),
    ).toBe(false);
    expect((await store().runs.getById(run.id))?.output).toBe("first");
    expect(await store().runs.memory(acme.id, run.threadId, "chat")).toEqual({
      messages: [
        { role: "user", content: "question for first" },
        { role: "assistant", content: "first" },
      ],
      dropped: 0,
    });
    expect(await store().webhooks.getDelivery(acme.id, secondDelivery.id)).toBeNull();
    expect(await store().runs.complete(Bun.randomUUIDv7(), completion("nobody"))).toBe(false);
  });

  test("complete and fail keep outputJson, finishReason and memoryWindow", async () => {
    const done = newRun(version);
    await store().runs.create(done);
    const outputJson = { reply: "hi", tags: ["a", "b"], score: 1.5, nested: { ok: true, none: null } };
    expect(
      await store().runs.complete(
        done.id,
        completion('{"reply":"hi"}', {
          outputJson,
          finishReason: "length",
          memoryWindow: { messages: 3, dropped: 1 },
        }),
      ),
    ).toBe(true);
    expect(await store().runs.getById(done.id)).toMatchObject({
      status: "completed",
      outputJson,
      finishReason: "length",
      memoryWindow: { messages: 3, dropped: 1 },
    });

    const plain = newRun(version);
    await store().runs.create(plain);
    await store().runs.complete(plain.id, completion("text"));
    expect(await store().runs.getById(plain.id)).toMatchObject({
      outputJson: null,
      finishReason: null,
      memoryWindow: null,
    });

    const refused = newRun(version);
    await store().runs.create(refused);
    expect(
      await store().runs.fail(refused.id, {
        error: "output does not match the schema: /: must be object",
        finishReason: "stop",
        memoryWindow: { messages: 0, dropped: 2 },
        cost,
        finishedAt: at(7),
        deliveries: [],
      }),
    ).toBe(true);
    expect(await store().runs.getById(refused.id)).toMatchObject({
      status: "failed",
      output: null,
      outputJson: null,
      finishReason: "stop",
      memoryWindow: { messages: 0, dropped: 2 },
    });
  });

  test("concurrent enders of one run: exactly one wins, and only its effects remain", async () => {
    for (let round = 0; round < 5; round++) {
      const run = newRun(version, { encryptedEnvVars: "ciphertext" });
      await store().runs.create(run);
      const outcomes = await Promise.all([
        store().runs.complete(run.id, completion("a")),
        store().runs.complete(run.id, completion("b")),
        store().runs.fail(run.id, { error: "c", cost: null, finishedAt: at(1), deliveries: [] }),
        store().runs.complete(run.id, completion("d")),
      ]);
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      const winner = outcomes.indexOf(true);
      const stored = await store().runs.getById(run.id);
      const { messages: memory } = await store().runs.memory(acme.id, run.threadId, "default");
      if (winner === 2) {
        expect(stored).toMatchObject({ status: "failed", error: "c", output: null });
        expect(memory).toEqual([]);
      } else {
        const output = ["a", "b", "c", "d"][winner] ?? "";
        expect(stored).toMatchObject({ status: "completed", output, error: null });
        expect(memory.map((message) => message.content)).toEqual([`question for ${output}`, output]);
      }
      expect(stored?.encryptedEnvVars).toBeNull();
    }
  });

  test("fail ends a pending run once, keeps its cost, erases its secrets", async () => {
    const run = newRun(version, { encryptedEnvVars: "ciphertext" });
    await store().runs.create(run);
    const webhookDelivery = await deliveryFor(run.id, "run.failed");
    expect(
      await store().runs.fail(run.id, {
        error: "provider said no",
        cost,
        finishedAt: at(9),
        deliveries: [webhookDelivery],
      }),
    ).toBe(true);
    expect(await store().runs.getById(run.id)).toEqual({
      ...pendingRunRecord(run),
      status: "failed",
      error: "provider said no",
      cost,
      finishedAt: at(9),
      encryptedEnvVars: null,
    });
    expect(await store().webhooks.getDelivery(acme.id, webhookDelivery.id)).toEqual(stateOf(webhookDelivery));
    expect(
      await store().runs.fail(run.id, { error: "again", cost: null, finishedAt: at(10), deliveries: [] }),
    ).toBe(false);
    expect(await store().runs.complete(run.id, completion("too late"))).toBe(false);
    expect(await store().runs.memory(acme.id, run.threadId, "default")).toEqual({ messages: [], dropped: 0 });
  });

  test("memory is bounded: the newest whole exchanges within N messages and B bytes, oldest first", async () => {
    const thread = Bun.randomUUIDv7();
    // Six exchanges on channel "a" (each 2 messages), one on "b" in between; "é" is 2 UTF-8 bytes.
    const outputs = ["e1", "e2", "e3", "é4", "e5", "e6"];
    for (const [index, output] of outputs.entries()) {
      const run = newRun(version, { threadId: thread, channel: "a", createdAt: at(index) });
      await store().runs.create(run);
      await store().runs.complete(run.id, completion(output, { finishedAt: at(10 + index) }));
      if (index === 2) {
        const side = newRun(version, { threadId: thread, channel: "b", createdAt: at(index) });
        await store().runs.create(side);
        await store().runs.complete(side.id, completion("side"));
      }
    }
    const contents = async (bound: { maxMessages: number; maxBytes: number }) =>
      (await store().runs.memory(acme.id, thread, "a", bound)).messages.map((message) => message.content);
    const exchange = (output: string) => [`question for ${output}`, output];
    const roomy = { maxMessages: 1_000, maxBytes: 1_000_000 };
    expect(await contents(roomy)).toEqual(outputs.flatMap(exchange));
    // Whole exchanges only: 5 messages allow the newest 2 exchanges, never half of a third.
    expect(await contents({ ...roomy, maxMessages: 5 })).toEqual([...exchange("e5"), ...exchange("e6")]);
    expect(await contents({ ...roomy, maxMessages: 1 })).toEqual([]);
    // Bytes: each of e5, e6 exchanges is 15 + 2 = 17 bytes; "é4" is 16 + 3 = 19.
    expect(await contents({ ...roomy, maxBytes: 34 })).toEqual([...exchange("e5"), ...exchange("e6")]);
    expect(await contents({ ...roomy, maxBytes: 52 })).toEqual([...exchange("e5"), ...exchange("e6")]);
    expect(await contents({ ...roomy, maxBytes: 53 })).toEqual([
      ...exchange("é4"),
      ...exchange("e5"),
      ...exchange("e6"),
    ]);
    expect(await contents({ ...roomy, maxBytes: 16 })).toEqual([]);
    // The default bound holds all of a small history.
    expect(await store().runs.memory(acme.id, thread, "a")).toMatchObject({
      messages: { length: 12 },
      dropped: 0,
    });
  });

  test("complete and fail keep the run's memory window", async () => {
    const completed = newRun(version);
    const failed = newRun(version);
    const unread = newRun(version);
    for (const run of [completed, failed, unread]) await store().runs.create(run);
    const memoryWindow = { messages: 20, dropped: 280 };
    await store().runs.complete(completed.id, completion("x", { memoryWindow }));
    await store().runs.fail(failed.id, {
      error: "no",
      cost: null,
      finishedAt: at(5),
      memoryWindow: { messages: 0, dropped: 3 },
      deliveries: [],
    });
    await store().runs.fail(unread.id, { error: "no", cost: null, finishedAt: at(5), deliveries: [] });
    expect((await store().runs.getById(completed.id))?.memoryWindow).toEqual(memoryWindow);
    expect((await store().runs.getById(failed.id))?.memoryWindow).toEqual({ messages: 0, dropped: 3 });
    expect((await store().runs.getById(unread.id))?.memoryWindow).toBeNull();
  });

  /** Six exchanges on channel "a" of a new thread (and one on "b"): outputs e1, e2, e3, é4, e5, e6. */
  const sixExchanges = async (): Promise<string> => {
    const thread = Bun.randomUUIDv7();
    for (const [index, output] of ["e1", "e2", "e3", "é4", "e5", "e6"].entries()) {
      const run = newRun(version, { threadId: thread, channel: "a", createdAt: at(index) });
      await store().runs.create(run);
      await store().runs.complete(run.id, completion(output, { finishedAt: at(10 + index) }));
      if (index === 2) {
        const side = newRun(version, { threadId: thread, channel: "b", createdAt: at(index) });
        await store().runs.create(side);
        await store().runs.complete(side.id, completion("side"));
      }
    }
    return thread;
  };
  const roomy = { maxMessages: 1_000, maxBytes: 1_000_000 };
  /** The assistant outputs carried, and the count of the channel's messages left out. */
  const windowOf = async (thread: string, bound: MemoryBound) => {
    const memory = await store().runs.memory(acme.id, thread, "a", bound);
    const outputs = memory.messages.filter((message) => message.role === "assistant");
    return { outputs: outputs.map((message) => message.content), dropped: memory.dropped };
  };

  test("memory counts what the window leaves out: dropped = the channel's messages not carried", async () => {
    const thread = await sixExchanges();
    expect(await windowOf(thread, roomy)).toEqual({
      outputs: ["e1", "e2", "e3", "é4", "e5", "e6"],
      dropped: 0,
    });
    // 12 messages fit exactly; 11 leave out a whole exchange (and the store counts the rest).
    expect(await windowOf(thread, { ...roomy, maxMessages: 12 })).toMatchObject({ dropped: 0 });
    expect(await windowOf(thread, { ...roomy, maxMessages: 11 })).toEqual({
      outputs: ["e2", "e3", "é4", "e5", "e6"],
      dropped: 2,
    });
    expect(await windowOf(thread, { ...roomy, maxMessages: 5 })).toEqual({
      outputs: ["e5", "e6"],
      dropped: 8,
    });
    expect(await windowOf(thread, { ...roomy, maxMessages: 1 })).toEqual({ outputs: [], dropped: 12 });
    expect(await windowOf(thread, { ...roomy, maxMessages: 0 })).toEqual({ outputs: [], dropped: 12 });
    // The other channel's exchange is neither carried nor counted.
    expect(await store().runs.memory(acme.id, thread, "b", { ...roomy, maxMessages: 0 })).toEqual({
      messages: [],
      dropped: 2,
    });
  });

  test("memory honours a token bound: ceil(UTF-8 bytes / 4) per message, whole exchanges", async () => {
    const thread = await sixExchanges();
    // "question for e6" (15 bytes) is 4 tokens, "e6" 1: each exchange is 5 ("question for é4" is 16
    // bytes, "é4" 3: also 4 + 1).
    expect(await windowOf(thread, { ...roomy, maxTokens: 30 })).toEqual({
      outputs: ["e1", "e2", "e3", "é4", "e5", "e6"],
      dropped: 0,
    });
    expect(await windowOf(thread, { ...roomy, maxTokens: 29 })).toEqual({
      outputs: ["e2", "e3", "é4", "e5", "e6"],
      dropped: 2,
    });
    expect(await windowOf(thread, { ...roomy, maxTokens: 10 })).toEqual({
      outputs: ["e5", "e6"],
      dropped: 8,
    });
    expect(await windowOf(thread, { ...roomy, maxTokens: 9 })).toEqual({ outputs: ["e6"], dropped: 10 });
    expect(await windowOf(thread, { ...roomy, maxTokens: 4 })).toEqual({ outputs: [], dropped: 12 });
    // The tighter of the limits wins.
    expect(await windowOf(thread, { ...roomy, maxMessages: 2, maxTokens: 10 })).toEqual({
      outputs: ["e6"],
      dropped: 10,
    });
  });

  test("memory keeps a message's parts and reads them back; their bytes count toward maxBytes", async () => {
    const thread = Bun.randomUUIDv7();
    const parts: ContentPart[] = [
      { type: "text", text: "what is this?" },
      { type: "image", image: "data:image/png;base64,iVBORw0KGgo=", mediaType: "image/png" },
      { type: "file", file: "https://example.com/a.pdf", mediaType: "application/pdf", filename: "a.pdf" },
    ];
    const exchange: RunCompletion["memory"] = [
      { role: "user", content: "what is this?", parts },
      { role: "assistant", content: "a cat" },
    ];
    const run = newRun(version, { threadId: thread, channel: "a" });
    await store().runs.create(run);
    await store().runs.complete(run.id, completion("a cat", { memory: exchange }));

    const memory = await store().runs.memory(acme.id, thread, "a");
    expect(memory).toEqual({ messages: exchange, dropped: 0 });
    expect(memory.messages[1]).not.toHaveProperty("parts");
    const exchangeBytes =
      Buffer.byteLength("what is this?") +
      Buffer.byteLength(JSON.stringify(parts)) +
      Buffer.byteLength("a cat");
    const carried = async (maxBytes: number) =>
      (await store().runs.memory(acme.id, thread, "a", { maxMessages: 10, maxBytes })).messages.length;
    expect(await carried(exchangeBytes)).toBe(2);
    expect(await carried(exchangeBytes - 1)).toBe(0);
    // Tokens count the text only: 4 ("what is this?") + 2 ("a cat").
    expect(
      (await store().runs.memory(acme.id, thread, "a", { ...roomy, maxTokens: 6 })).messages,
    ).toHaveLength(2);
    expect(
      (await store().runs.memory(acme.id, thread, "a", { ...roomy, maxTokens: 5 })).messages,
    ).toHaveLength(0);
  });

  test("memory returns a channel's completed exchanges oldest first, per thread and tenant", async () => {
    const thread = Bun.randomUUIDv7();
    const one = newRun(version, { threadId: thread, channel: "a", createdAt: at(1) });
    const two = newRun(version, { threadId: thread, channel: "a", createdAt: at(2) });
    const side = newRun(version, { threadId: thread, channel: "b", createdAt: at(3) });
    const pending = newRun(version, { threadId: thread, channel: "a", createdAt: at(4) });
    const foreign = newRun(otherVersion, { threadId: thread, channel: "a", createdAt: at(5) });
    for (const run of [one, two, side, pending, foreign]) await store().runs.create(run);
    await store().runs.complete(one.id, completion("one", { finishedAt: at(10) }));
    await store().runs.complete(side.id, completion("side", { finishedAt: at(11) }));
    await store().runs.complete(two.id, completion("two", { finishedAt: at(12) }));
    await store().runs.complete(foreign.id, completion("foreign", { finishedAt: at(13) }));

    expect(await store().runs.memory(acme.id, thread, "a")).toEqual({
      messages: [
        { role: "user", content: "question for one" },
        { role: "assistant", content: "one" },
        { role: "user", content: "question for two" },
        { role: "assistant", content: "two" },
      ],
      dropped: 0,
    });
    const contents = async (tenantId: string, channel: string) =>
      (await store().runs.memory(tenantId, thread, channel)).messages.map((message) => message.content);
    expect(await contents(acme.id, "b")).toEqual(["question for side", "side"]);
    expect(await contents(other.id, "a")).toEqual(["question for foreign", "foreign"]);
    expect(await store().runs.memory(acme.id, Bun.randomUUIDv7(), "a")).toEqual({ messages: [], dropped: 0 });

    const threadView = await store().runs.getThread(acme.id, thread);
    expect(threadView?.messages).toEqual([
      { runId: one.id, channel: "a", role: "user", content: "question for one", createdAt: at(10) },
      { runId: one.id, channel: "a", role: "assistant", content: "one", createdAt: at(10) },
      { runId: side.id, channel: "b", role: "user", content: "question for side", createdAt: at(11) },
      { runId: side.id, channel: "b", role: "assistant", content: "side", createdAt: at(11) },
      { runId: two.id, channel: "a", role: "user", content: "question for two", createdAt: at(12) },
      { runId: two.id, channel: "a", role: "assistant", content: "two", createdAt: at(12) },
    ]);
  });

  test("updateEncryptedEnvVars re-encrypts a pending run and never revives an ended one's", async () => {
    const live = newRun(version, { encryptedEnvVars: "old" });
    const ended = newRun(version, { encryptedEnvVars: "old" });
    await store().runs.create(live);
    await store().runs.create(ended);
    await store().runs.complete(ended.id, completion("done"));
    await store().runs.updateEncryptedEnvVars(live.id, "new");
    await store().runs.updateEncryptedEnvVars(ended.id, "new");
    expect((await store().runs.getById(live.id))?.encryptedEnvVars).toBe("new");
    expect((await store().runs.getById(ended.id))?.encryptedEnvVars).toBeNull();
  });

  test("importMessages appends once per externalId, creates the thread, pages oldest first per tenant", async () => {
    const thread = Bun.randomUUIDv7();
    const batch = [
      { role: "user" as const, content: "q1", externalId: "m1", createdAt: at(1) },
      { role: "assistant" as const, content: "a1", externalId: "m2" },
      { role: "user" as const, content: "no id" },
      { role: "user" as const, content: "dup in batch", externalId: "m1" },
    ];
    expect(await store().runs.importMessages(acme.id, thread, "c", batch, at(5))).toEqual({
      imported: 3,
      skipped: 1,
    });
    expect(await store().runs.getThread(acme.id, thread)).toMatchObject({ id: thread, createdAt: at(5) });
    const withIds = batch.filter((message) => message.externalId !== undefined);
    expect(await store().runs.importMessages(acme.id, thread, "c", withIds, at(6))).toEqual({
      imported: 0,
      skipped: 3,
    });
    // Another channel or tenant has its own externalIds.
    expect(await store().runs.importMessages(acme.id, thread, "d", withIds.slice(0, 1), at(6))).toEqual({
      imported: 1,
      skipped: 0,
    });
    const first = await store().runs.listMessages(acme.id, thread, "c", { limit: 2 });
    expect(first.items).toEqual([
      { runId: null, externalId: "m1", channel: "c", role: "user", content: "q1", createdAt: at(1) },
      { runId: null, externalId: "m2", channel: "c", role: "assistant", content: "a1", createdAt: at(5) },
    ]);
    const second = await store().runs.listMessages(acme.id, thread, "c", {
      cursor: first.nextCursor,
      limit: 2,
    });
    expect(second).toEqual({
      items: [{ runId: null, channel: "c", role: "user", content: "no id", createdAt: at(5) }],
      nextCursor: null,
    });
    expect(await store().runs.listMessages(other.id, thread, "c", { limit: 10 })).toEqual({
      items: [],
      nextCursor: null,
    });
    await expect(
      store().runs.listMessages(acme.id, thread, "c", { cursor: "junk", limit: 2 }),
    ).rejects.toMatchObject({
      code: "invalid",
    });
    // Imported messages are memory: each its own unit, oldest first.
    expect(
      (await store().runs.memory(acme.id, thread, "c")).messages.map((message) => message.content),
    ).toEqual(["q1", "a1", "no id"]);
    expect(
      (await store().runs.memory(acme.id, thread, "c", { maxMessages: 1, maxBytes: 1_000 })).messages,
    ).toEqual([{ role: "user", content: "no id" }]);
  });

  test("concurrent identical imports add each message once", async () => {
    const thread = Bun.randomUUIDv7();
    const batch = Array.from({ length: 50 }, (_, index) => ({
      role: "user" as const,
      content: `m${index}`,
      externalId: `id-${index}`,
    }));
    const results = await Promise.all(
      [1, 2, 3].map(() => store().runs.importMessages(acme.id, thread, "default", batch, at(1))),
    );
    expect(results.reduce((sum, result) => sum + result.imported, 0)).toBe(50);
    expect((await store().runs.listMessages(acme.id, thread, "default", { limit: 200 })).items).toHaveLength(
      50,
    );
  });
};
