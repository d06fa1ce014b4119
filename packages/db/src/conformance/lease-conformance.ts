/**
 * Leases: what several instances sharing one store rely on (runs.claim / renewLeases /
 * releaseLease / listClaimable / requestCancel, webhooks.claimDelivery). Written against the
 * Store port only, so the memory, SQLite and Postgres stores all run it.
 */
import { beforeEach, expect, test } from "bun:test";
import type { Cost } from "@promptrun/contract";
import type {
  NewRun,
  PromptVersionRecord,
  Store,
  TenantRecord,
  WebhookDeliveryRecord,
} from "@promptrun/core";
import { addTenant, at, newRun, pendingRunRecord, pushPrompt, stateOf } from "@promptrun/core/testing";

const zeroBlock = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };
const cost: Cost = { success: zeroBlock, retries: zeroBlock, total: 0 };

const complete = (store: Store, id: string) =>
  store.runs.complete(id, {
    output: "done",
    tokenUsage: { input: 1, inputCached: 0, output: 1, reasoning: 0, total: 2 },
    cost,
    finishedAt: at(50),
    memory: [],
    deliveries: [],
    steps: [],
  });

const fail = (store: Store, id: string) =>
  store.runs.fail(id, { error: "cancelled", cost, finishedAt: at(50), deliveries: [] });

const ids = (runs: Array<{ id: string }>) => runs.map((run) => run.id);

export const leaseConformance = (store: () => Store): void => {
  let acme: TenantRecord;
  let other: TenantRecord;
  let version: PromptVersionRecord;
  let otherVersion: PromptVersionRecord;
  beforeEach(async () => {
    acme = await addTenant(store(), "acme");
    other = await addTenant(store(), "other");
    version = await pushPrompt(store(), acme.id);
    otherVersion = await pushPrompt(store(), other.id);
  });

  const create = async (overrides: Partial<NewRun> = {}, of = version) => {
    const run = newRun(of, overrides);
    await store().runs.create(run);
    return run;
  };

  test("a pending run is leased to one owner at a time; the lease lapses at leaseUntil", async () => {
    const run = await create();
    expect(await store().runs.claim(run.id, "a", at(10), at(0))).toBe(true);
    expect(await store().runs.claim(run.id, "b", at(10), at(5))).toBe(false);
    // The owner may claim again (a re-claim extends it).
    expect(await store().runs.claim(run.id, "a", at(20), at(5))).toBe(true);
    expect(await store().runs.claim(run.id, "b", at(30), at(19.999))).toBe(false);
    // At leaseUntil the lease has lapsed: another instance takes the run over.
    expect(await store().runs.claim(run.id, "b", at(30), at(20))).toBe(true);
    expect(await store().runs.renewLeases("a", [run.id], at(40))).toEqual({
      renewed: [],
      cancelRequested: [],
    });
    // The record keeps its documented shape: no lease fields leak into it.
    const stored = await store().runs.getById(run.id);
    expect(Object.keys(stored ?? {}).sort()).toEqual(Object.keys(pendingRunRecord(run)).sort());
  });

  test("ended and unknown runs cannot be claimed; ending a run frees its lease", async () => {
    const run = await create();
    expect(await store().runs.claim(run.id, "a", at(10), at(0))).toBe(true);
    expect(await complete(store(), run.id)).toBe(true);
    expect(await store().runs.claim(run.id, "b", at(10), at(0))).toBe(false);
    expect(await store().runs.claim(Bun.randomUUIDv7(), "b", at(10), at(0))).toBe(false);
    expect(await store().runs.claim("not-a-uuid", "b", at(10), at(0))).toBe(false);
    expect(await store().runs.renewLeases("a", [run.id], at(20))).toEqual({
      renewed: [],
      cancelRequested: [],
    });
  });

  test("only a channel's head can be claimed: strict creation order per (tenant, thread, channel)", async () => {
    const threadId = Bun.randomUUIDv7();
    const first = await create({ threadId, createdAt: at(1) });
    const second = await create({ threadId, createdAt: at(2) });
    const sideChannel = await create({ threadId, channel: "side", createdAt: at(3) });
    const otherThread = await create({ createdAt: at(4) });
    // Same thread uuid, another tenant: a different thread.
    const otherTenant = await create({ threadId, createdAt: at(0) }, otherVersion);

    expect(await store().runs.claim(second.id, "a", at(10), at(0))).toBe(false);
    expect(await store().runs.claim(sideChannel.id, "a", at(10), at(0))).toBe(true);
    expect(await store().runs.claim(otherThread.id, "a", at(10), at(0))).toBe(true);
    expect(await store().runs.claim(otherTenant.id, "a", at(10), at(0))).toBe(true);
    expect(await store().runs.claim(first.id, "b", at(10), at(0))).toBe(true);
    // Still not while the head is pending, even with its lease lapsed.
    expect(await store().runs.claim(second.id, "b", at(100), at(50))).toBe(false);
    expect(await complete(store(), first.id)).toBe(true);
    expect(await store().runs.claim(second.id, "b", at(10), at(0))).toBe(true);
  });

  test("ignoreChannelOrder claims a run behind its head (to end a cancelled run)", async () => {
    const threadId = Bun.randomUUIDv7();
    const head = await create({ threadId, createdAt: at(1) });
    const behind = await create({ threadId, createdAt: at(2) });
    expect(await store().runs.claim(head.id, "a", at(10), at(0))).toBe(true);
    expect(await store().runs.claim(behind.id, "b", at(10), at(0), { ignoreChannelOrder: true })).toBe(true);
    // A live lease still wins over ignoreChannelOrder.
    expect(await store().runs.claim(head.id, "b", at(10), at(0), { ignoreChannelOrder: true })).toBe(false);
  });

  test("tenantLimit counts the tenant's live leases across owners", async () => {
    const runs = await Promise.all([1, 2, 3, 4].map((second) => create({ createdAt: at(second) })));
    const [one, two, three, four] = runs.map((run) => run.id) as [string, string, string, string];
    const theirs = await create({}, otherVersion);
    const limit = { tenantLimit: 2 };
    expect(await store().runs.claim(one, "a", at(10), at(0), limit)).toBe(true);
    expect(await store().runs.claim(two, "b", at(10), at(0), limit)).toBe(true);
    expect(await store().runs.claim(three, "c", at(10), at(0), limit)).toBe(false);
    // Other tenants have their own limit; without a limit nothing is counted.
    expect(await store().runs.claim(theirs.id, "c", at(10), at(0), limit)).toBe(true);
    expect(await store().runs.claim(four, "c", at(10), at(0))).toBe(true);
    expect(await fail(store(), four)).toBe(true);
    // An ended run and a released lease no longer count…
    await store().runs.releaseLease(two, "b");
    expect(await store().runs.claim(three, "c", at(10), at(0), limit)).toBe(true);
    // …nor does a lapsed one (its owner is presumed dead).
    expect(await store().runs.claim(two, "d", at(10), at(5), limit)).toBe(false);
    expect(await store().runs.claim(two, "d", at(20), at(10), limit)).toBe(true);
  });

  test("concurrent claims: one winner per run, and never more than tenantLimit", async () => {
    const run = await create();
    const owners = Array.from({ length: 12 }, (_, index) => `owner-${index}`);
    const results = await Promise.all(
      owners.map((owner) => store().runs.claim(run.id, owner, at(10), at(0))),
    );
    expect(results.filter(Boolean)).toHaveLength(1);

    const many = await Promise.all(
      Array.from({ length: 12 }, (_, index) => create({ createdAt: at(index + 1) })),
    );
    const claims = await Promise.all(
      many.map((candidate, index) =>
        store().runs.claim(candidate.id, `owner-${index}`, at(10), at(0), { tenantLimit: 4 }),
      ),
    );
    // The first run already holds one of the tenant's four slots.
    expect(claims.filter(Boolean)).toHaveLength(3);
  });

  test("renewLeases extends the owner's leases only and reports cancel requests", async () => {
    const mine = await create({ createdAt: at(1) });
    const cancelled = await create({ createdAt: at(2) });
    const theirs = await create({ createdAt: at(3) });
    const ended = await create({ createdAt: at(4) });
    for (const run of [mine, cancelled, ended])
      expect(await store().runs.claim(run.id, "a", at(10), at(0))).toBe(true);
    expect(await store().runs.claim(theirs.id, "b", at(10), at(0))).toBe(true);
    expect(await store().runs.requestCancel(cancelled.id, at(5))).toBe(true);
    expect(await complete(store(), ended.id)).toBe(true);

    const renewal = await store().runs.renewLeases("a", [mine.id, cancelled.id, theirs.id, ended.id], at(60));
    expect(renewal.renewed.sort()).toEqual([mine.id, cancelled.id].sort());
    expect(renewal.cancelRequested).toEqual([cancelled.id]);
    // Renewed past the old leaseUntil: nobody else can take them at 30 s.
    expect(await store().runs.claim(mine.id, "b", at(90), at(30))).toBe(false);
    expect(await store().runs.renewLeases("a", [], at(60))).toEqual({ renewed: [], cancelRequested: [] });
  });

  test("releaseLease frees only the owner's lease", async () => {
    const run = await create();
    expect(await store().runs.claim(run.id, "a", at(10), at(0))).toBe(true);
    await store().runs.releaseLease(run.id, "b");
    expect(await store().runs.claim(run.id, "b", at(10), at(0))).toBe(false);
    await store().runs.releaseLease(run.id, "a");
    expect(await store().runs.claim(run.id, "b", at(10), at(0))).toBe(true);
  });

  test("requestCancel marks pending runs only", async () => {
    const run = await create();
    const done = await create();
    await complete(store(), done.id);
    expect(await store().runs.requestCancel(run.id, at(1))).toBe(true);
    expect(await store().runs.requestCancel(run.id, at(2))).toBe(true);
    expect(await store().runs.requestCancel(done.id, at(1))).toBe(false);
    expect(await store().runs.requestCancel(Bun.randomUUIDv7(), at(1))).toBe(false);
    // A cancel request does not end the run by itself.
    expect((await store().runs.getById(run.id))?.status).toBe("pending");
  });

  test("listClaimable: free channel heads, oldest first within each class, limit per class", async () => {
    const threadId = Bun.randomUUIDv7();
    const head = await create({ threadId, createdAt: at(1) });
    await create({ threadId, createdAt: at(2) });
    const leased = await create({ createdAt: at(3) });
    const lapsed = await create({ createdAt: at(4) });
    const lowOld = await create({ priority: "low", createdAt: at(0) });
    const onsite = await create({ priority: "onsite", createdAt: at(9) });
    const newer = await Promise.all([10, 11, 12].map((second) => create({ createdAt: at(second) })));
    const done = await create({ createdAt: at(0) });
    await complete(store(), done.id);
    expect(await store().runs.claim(leased.id, "a", at(100), at(0))).toBe(true);
    expect(await store().runs.claim(lapsed.id, "a", at(20), at(0))).toBe(true);

    const claimable = await store().runs.listClaimable(at(30), 3);
    expect(ids(claimable)).toEqual([onsite.id, head.id, lapsed.id, newer[0]!.id, lowOld.id]);
    expect(claimable[0]).toEqual(pendingRunRecord(onsite));
    expect(ids(await store().runs.listClaimable(at(30), 10))).toEqual([
      onsite.id,
      head.id,
      lapsed.id,
      ...ids(newer),
      lowOld.id,
    ]);
    // Before the lapsed lease's end it is not offered.
    expect(ids(await store().runs.listClaimable(at(10), 10))).not.toContain(lapsed.id);
  });

  test("a deep channel does not hide the heads of newer channels", async () => {
    const deepThread = Bun.randomUUIDv7();
    const deep = await Promise.all(
      Array.from({ length: 600 }, (_, index) => create({ threadId: deepThread, createdAt: at(index / 100) })),
    );
    const newer = await create({ createdAt: at(10) });
    expect(await store().runs.claim(deep[0]!.id, "a", at(100), at(10))).toBe(true);
    expect(ids(await store().runs.listClaimable(at(20), 2))).toEqual([newer.id]);
  });

  test("a delivery is leased to one sender; recordAttempt and requeue free it", async () => {
    const run = await create();
    const environment = await store().environments.ensure(acme.id, "production", Bun.randomUUIDv7(), at(0));
    const webhookId = Bun.randomUUIDv7();
    await store().webhooks.create({
      id: webhookId,
      tenantId: acme.id,
      environmentId: environment.id,
      environment: environment.name,
      url: "https://example.com/hook",
      encryptedSecret: "secret",
      events: ["run.completed"],
      enabled: true,
      failureStreak: 0,
      createdAt: at(0),
    });
    const delivery: WebhookDeliveryRecord = {
      id: Bun.randomUUIDv7(),
      webhookId,
      tenantId: acme.id,
      runId: run.id,
      eventId: null,
      eventType: "run.completed",
      payload: "{}",
      status: "pending",
      attempts: 0,
      nextAttemptAt: at(10),
      createdAt: at(10),
    };
    await store().webhooks.enqueueDeliveries([delivery]);
    // Not due yet.
    expect(await store().webhooks.claimDelivery(delivery.id, "a", at(20), at(5))).toBe(false);
    const claims = await Promise.all(
      ["a", "b", "c"].map((owner) => store().webhooks.claimDelivery(delivery.id, owner, at(40), at(10))),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await store().webhooks.dueDeliveries(at(20), 10)).toEqual([]);
    // A sender that died: its lease lapses and the delivery is due again.
    expect(ids(await store().webhooks.dueDeliveries(at(40), 10))).toEqual([delivery.id]);
    expect(await store().webhooks.claimDelivery(delivery.id, "d", at(80), at(40))).toBe(true);
    await store().webhooks.recordAttempt(
      {
        id: Bun.randomUUIDv7(),
        deliveryId: delivery.id,
        attempt: 1,
        attemptedAt: at(41),
        responseStatus: 500,
        latencyMs: 3,
        error: "HTTP 500",
      },
      { status: "pending", nextAttemptAt: at(45), failureStreak: 1, disable: false },
    );
    // Freed by the attempt's record: due at its next attempt time, before the old lease's end.
    expect(await store().webhooks.dueDeliveries(at(45), 10)).toEqual([
      { ...stateOf(delivery), attempts: 1, nextAttemptAt: at(45) },
    ]);
    expect(await store().webhooks.claimDelivery(delivery.id, "e", at(90), at(45))).toBe(true);
    await store().webhooks.requeue(delivery.id, at(46));
    expect(await store().webhooks.claimDelivery(delivery.id, "f", at(90), at(46))).toBe(true);
    expect(await store().webhooks.getDelivery(acme.id, delivery.id)).toEqual({
      ...stateOf(delivery),
      attempts: 1,
      nextAttemptAt: at(46),
    });
  });
};
