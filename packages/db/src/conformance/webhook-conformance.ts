import { beforeEach, expect, test } from "bun:test";
import type {
  EnvironmentRecord,
  TenantRecord,
  WebhookAttemptRecord,
  WebhookDeliveryRecord,
  WebhookRecord,
} from "@promptrun/core";
import { addTenant, at, newRun, pushPrompt, stateOf } from "@promptrun/core/testing";
import type { ConformanceContext } from "./conformance-context.ts";

export const webhookConformance = ({ store, storedWebhookSecret }: ConformanceContext): void => {
  let acme: TenantRecord;
  let other: TenantRecord;
  let production: EnvironmentRecord;
  let theirProduction: EnvironmentRecord;
  beforeEach(async () => {
    acme = await addTenant(store(), "acme");
    other = await addTenant(store(), "other");
    production = await store().environments.ensure(acme.id, "production", Bun.randomUUIDv7(), at(0));
    theirProduction = await store().environments.ensure(other.id, "production", Bun.randomUUIDv7(), at(0));
  });

  const addWebhook = async (
    environment: EnvironmentRecord,
    overrides: Partial<WebhookRecord> = {},
  ): Promise<WebhookRecord> => {
    const webhook: WebhookRecord = {
      id: Bun.randomUUIDv7(),
      tenantId: environment.tenantId,
      environmentId: environment.id,
      environment: environment.name,
      url: "https://example.com/hook",
      encryptedSecret: "encrypted-whsec",
      events: ["run.completed", "run.failed"],
      enabled: true,
      failureStreak: 0,
      createdAt: at(1),
      ...overrides,
    };
    await store().webhooks.create(webhook);
    return webhook;
  };

  const addRun = async (tenantId: string): Promise<string> => {
    const version =
      (await store().prompts.resolveVersion(tenantId, "greet", { kind: "latest" })) ??
      (await pushPrompt(store(), tenantId, "greet"));
    const run = newRun(version);
    await store().runs.create(run);
    return run.id;
  };

  const delivery = (
    webhook: WebhookRecord,
    runId: string,
    overrides: Partial<WebhookDeliveryRecord> = {},
  ): WebhookDeliveryRecord => ({
    id: Bun.randomUUIDv7(),
    webhookId: webhook.id,
    tenantId: webhook.tenantId,
    runId,
    eventId: null,
    eventType: "run.completed",
    payload: JSON.stringify({ type: "run.completed", runId }),
    status: "pending",
    attempts: 0,
    nextAttemptAt: at(10),
    createdAt: at(10),
    ...overrides,
  });

  const attempt = (
    deliveryId: string,
    number: number,
    overrides: Partial<WebhookAttemptRecord> = {},
  ): WebhookAttemptRecord => ({
    id: Bun.randomUUIDv7(),
    deliveryId,
    attempt: number,
    attemptedAt: at(10 + number),
    responseStatus: 500,
    latencyMs: 12.5,
    error: "HTTP 500",
    ...overrides,
  });

  test("creates and reads webhooks with their environment name, per tenant", async () => {
    const mine = await addWebhook(production, { events: ["run.failed"] });
    const staging = await store().environments.ensure(acme.id, "staging", Bun.randomUUIDv7(), at(0));
    const onStaging = await addWebhook(staging, { createdAt: at(2) });
    const theirs = await addWebhook(theirProduction);

    expect(await store().webhooks.get(acme.id, mine.id)).toEqual(mine);
    expect(await store().webhooks.get(other.id, mine.id)).toBeNull();
    expect(await store().webhooks.list(acme.id)).toEqual([mine, onStaging]);
    expect(await store().webhooks.list(other.id)).toEqual([theirs]);
    expect(await store().webhooks.listForEnvironment(staging.id)).toEqual([onStaging]);
    expect(await store().webhooks.listForEnvironment(production.id)).toEqual([mine]);
  });

  test("a webhook on an unknown environment is refused; a duplicate id is a conflict", async () => {
    await expect(addWebhook({ ...production, id: Bun.randomUUIDv7() })).rejects.toMatchObject({
      code: "invalid",
    });
    const webhook = await addWebhook(production);
    await expect(addWebhook(production, { id: webhook.id })).rejects.toMatchObject({ code: "conflict" });
  });

  test("setEnabled disables, and re-enabling resets the failure streak", async () => {
    const webhook = await addWebhook(production, { failureStreak: 7 });
    await store().webhooks.setEnabled(webhook.id, false);
    expect(await store().webhooks.get(acme.id, webhook.id)).toMatchObject({
      enabled: false,
      failureStreak: 7,
    });
    await store().webhooks.setEnabled(webhook.id, true);
    expect(await store().webhooks.get(acme.id, webhook.id)).toMatchObject({
      enabled: true,
      failureStreak: 0,
    });
  });

  test("dueDeliveries returns pending deliveries due by now, oldest first, up to the limit", async () => {
    const webhook = await addWebhook(production);
    const runId = await addRun(acme.id);
    const later = delivery(webhook, runId, { nextAttemptAt: at(30) });
    const first = delivery(webhook, runId, { nextAttemptAt: at(5) });
    const second = delivery(webhook, runId, { nextAttemptAt: at(6) });
    const notYet = delivery(webhook, runId, { nextAttemptAt: at(100) });
    const delivered = delivery(webhook, runId, { status: "delivered", nextAttemptAt: null });
    await store().webhooks.enqueueDeliveries([later, first, second, notYet, delivered]);
    await store().webhooks.enqueueDeliveries([]);

    expect((await store().webhooks.dueDeliveries(at(50), 10)).map((row) => row.id)).toEqual([
      first.id,
      second.id,
      later.id,
    ]);
    expect(await store().webhooks.dueDeliveries(at(50), 2)).toEqual([first, second].map(stateOf));
    expect(await store().webhooks.dueDeliveries(at(30), 10)).toHaveLength(3);
    expect(await store().webhooks.dueDeliveries(at(1), 10)).toEqual([]);
  });

  test("a run event's payload is stored once for all its deliveries and read apart from them", async () => {
    const hooks = [await addWebhook(production), await addWebhook(production), await addWebhook(production)];
    const runId = await addRun(acme.id);
    const body = JSON.stringify({ type: "run.completed", data: { id: runId, output: "x".repeat(10_000) } });
    const rows = hooks.map((webhook) => delivery(webhook, runId, { payload: body }));
    await store().webhooks.enqueueDeliveries(rows);
    // A second write for the same run event (a retried end) keeps the first body.
    await store().webhooks.enqueueDeliveries([delivery(hooks[0]!, runId, { payload: "{}" })]);

    expect(await store().webhooks.getPayload(runId, "run.completed")).toBe(body);
    expect(await store().webhooks.getPayload(runId, "run.failed")).toBeNull();
    const due = await store().webhooks.dueDeliveries(at(50), 10);
    expect(due).toHaveLength(4);
    for (const row of due) expect(row).not.toHaveProperty("payload");
    expect(await store().webhooks.getDelivery(acme.id, rows[0]!.id)).toEqual(stateOf(rows[0]!));
  });

  test("a prompt event's deliveries have no run; its body is stored once under its event id", async () => {
    const hooks = [
      await addWebhook(production, { events: ["prompt.version.created"] }),
      await addWebhook(production, { events: ["prompt.version.created"] }),
    ];
    const eventId = Bun.randomUUIDv7();
    const body = JSON.stringify({ type: "prompt.version.created", data: { slug: "greet", version: 1 } });
    const rows = hooks.map((webhook) =>
      delivery(webhook, "", { runId: null, eventId, eventType: "prompt.version.created", payload: body }),
    );
    await store().webhooks.enqueueDeliveries(rows);

    expect(await store().webhooks.getEventPayload(eventId)).toBe(body);
    expect(await store().webhooks.getEventPayload(Bun.randomUUIDv7())).toBeNull();
    expect(await store().webhooks.dueDeliveries(at(50), 10)).toEqual(rows.map(stateOf));
    expect(await store().webhooks.getDelivery(acme.id, rows[0]!.id)).toEqual(stateOf(rows[0]!));
    expect(await store().webhooks.getDelivery(other.id, rows[0]!.id)).toBeNull();
    await store().webhooks.recordAttempt(attempt(rows[0]!.id, 1), {
      status: "delivered",
      nextAttemptAt: null,
      failureStreak: 0,
      disable: false,
    });
    const logged = await store().webhooks.listAttempts(acme.id, { limit: 10 });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      deliveryId: rows[0]!.id,
      runId: null,
      eventType: "prompt.version.created",
    });
    expect(await store().webhooks.listAttempts(other.id, { limit: 10 })).toEqual([]);
    await store().webhooks.requeue(rows[0]!.id, at(60));
    expect((await store().webhooks.getDelivery(acme.id, rows[0]!.id))?.status).toBe("pending");
  });

  test("dueDeliveries with perWebhook reads each webhook's oldest due deliveries only", async () => {
    const busy = await addWebhook(production);
    const quiet = await addWebhook(production);
    const runIds = [await addRun(acme.id), await addRun(acme.id), await addRun(acme.id)];
    const backlog = runIds.map((runId, index) => delivery(busy, runId, { nextAttemptAt: at(1 + index) }));
    const single = delivery(quiet, runIds[0]!, { nextAttemptAt: at(9) });
    await store().webhooks.enqueueDeliveries([...backlog, single]);

    // Without the option the backlog fills a read of 3; with it, the quiet webhook is in.
    expect((await store().webhooks.dueDeliveries(at(50), 3)).map((row) => row.id)).toEqual(
      backlog.map((row) => row.id),
    );
    expect(await store().webhooks.dueDeliveries(at(50), 3, { perWebhook: 1 })).toEqual(
      [backlog[0]!, single].map(stateOf),
    );
    expect(
      (await store().webhooks.dueDeliveries(at(50), 10, { perWebhook: 2 })).map((row) => row.id),
    ).toEqual([backlog[0]!.id, backlog[1]!.id, single.id]);
  });

  test("a delivery of an unknown run is refused", async () => {
    const webhook = await addWebhook(production);
    await expect(
      store().webhooks.enqueueDeliveries([delivery(webhook, Bun.randomUUIDv7())]),
    ).rejects.toMatchObject({ code: "invalid" });
  });

  test("recordAttempt logs the attempt and updates the delivery and the webhook in one go", async () => {
    const webhook = await addWebhook(production);
    const runId = await addRun(acme.id);
    const row = delivery(webhook, runId);
    await store().webhooks.enqueueDeliveries([row]);

    await store().webhooks.recordAttempt(attempt(row.id, 1), {
      status: "pending",
      nextAttemptAt: at(60),
      failureStreak: 1,
      disable: false,
    });
    expect(await store().webhooks.getDelivery(acme.id, row.id)).toEqual({
      ...stateOf(row),
      status: "pending",
      attempts: 1,
      nextAttemptAt: at(60),
    });
    expect(await store().webhooks.get(acme.id, webhook.id)).toMatchObject({
      failureStreak: 1,
      enabled: true,
    });

    await store().webhooks.recordAttempt(attempt(row.id, 2), {
      status: "failed",
      nextAttemptAt: null,
      failureStreak: 50,
      disable: true,
    });
    expect(await store().webhooks.getDelivery(acme.id, row.id)).toMatchObject({
      status: "failed",
      attempts: 2,
      nextAttemptAt: null,
    });
    expect(await store().webhooks.get(acme.id, webhook.id)).toMatchObject({
      failureStreak: 50,
      enabled: false,
    });
    expect(await store().webhooks.dueDeliveries(at(1000), 10)).toEqual([]);

    await store().webhooks.requeue(row.id, at(500));
    expect(await store().webhooks.dueDeliveries(at(500), 10)).toMatchObject([
      { id: row.id, status: "pending", nextAttemptAt: at(500) },
    ]);
    await store().webhooks.recordAttempt(attempt(row.id, 3, { responseStatus: 204, error: null }), {
      status: "delivered",
      nextAttemptAt: null,
      failureStreak: 0,
      disable: false,
    });
    // A late report of an earlier attempt never lowers the count.
    await store().webhooks.recordAttempt(attempt(row.id, 1, { attemptedAt: at(600) }), {
      status: "delivered",
      nextAttemptAt: null,
      failureStreak: 0,
      disable: false,
    });
    expect(await store().webhooks.getDelivery(acme.id, row.id)).toMatchObject({
      status: "delivered",
      attempts: 3,
    });
    expect(await store().webhooks.dueDeliveries(at(1000), 10)).toEqual([]);
  });

  test("listAttempts filters by webhook and run, newest first, never across tenants", async () => {
    const webhook = await addWebhook(production);
    const secondWebhook = await addWebhook(production);
    const theirWebhook = await addWebhook(theirProduction);
    const runA = await addRun(acme.id);
    const runB = await addRun(acme.id);
    const theirRun = await addRun(other.id);
    const onA = delivery(webhook, runA);
    const onB = delivery(secondWebhook, runB, { eventType: "run.failed" });
    const theirs = delivery(theirWebhook, theirRun);
    await store().webhooks.enqueueDeliveries([onA, onB, theirs]);
    const outcome = { status: "pending" as const, nextAttemptAt: at(99), failureStreak: 1, disable: false };
    const onA1 = attempt(onA.id, 1);
    const onA2 = attempt(onA.id, 2, { responseStatus: 200, error: null });
    await store().webhooks.recordAttempt(onA1, outcome);
    await store().webhooks.recordAttempt(onA2, outcome);
    await store().webhooks.recordAttempt(
      attempt(onB.id, 1, { responseStatus: null, latencyMs: null, attemptedAt: at(15) }),
      outcome,
    );
    await store().webhooks.recordAttempt(attempt(theirs.id, 1), outcome);

    const all = await store().webhooks.listAttempts(acme.id, { limit: 10 });
    expect(all.map((row) => [row.deliveryId, row.attempt])).toEqual([
      [onB.id, 1],
      [onA.id, 2],
      [onA.id, 1],
    ]);
    expect(all[1]).toEqual({ ...onA2, webhookId: webhook.id, runId: runA, eventType: "run.completed" });

    const forB = await store().webhooks.listAttempts(acme.id, { runId: runB, limit: 10 });
    expect(forB).toMatchObject([
      { deliveryId: onB.id, eventType: "run.failed", responseStatus: null, latencyMs: null },
    ]);
    expect(
      await store().webhooks.listAttempts(acme.id, { webhookId: secondWebhook.id, limit: 10 }),
    ).toHaveLength(1);
    expect(await store().webhooks.listAttempts(acme.id, { webhookId: theirWebhook.id, limit: 10 })).toEqual(
      [],
    );
    expect(await store().webhooks.listAttempts(acme.id, { limit: 1 })).toHaveLength(1);
    expect(await store().webhooks.getDelivery(acme.id, theirs.id)).toBeNull();
  });

  test("delete is tenant-scoped, keeps the history, fails pending deliveries and erases the secret", async () => {
    const webhook = await addWebhook(production);
    const kept = await addWebhook(production, { encryptedSecret: "kept-secret" });
    const runId = await addRun(acme.id);
    const attempted = delivery(webhook, runId);
    const queued = delivery(webhook, runId, { nextAttemptAt: at(50) });
    const done = delivery(webhook, runId, { status: "delivered", nextAttemptAt: null });
    await store().webhooks.enqueueDeliveries([attempted, queued, done]);
    await store().webhooks.recordAttempt(attempt(attempted.id, 1), {
      status: "pending",
      nextAttemptAt: at(20),
      failureStreak: 1,
      disable: false,
    });

    expect(await store().webhooks.delete(other.id, webhook.id)).toBe(false);
    expect(await store().webhooks.get(acme.id, webhook.id)).not.toBeNull();
    expect(await store().webhooks.delete(acme.id, webhook.id)).toBe(true);

    expect(await store().webhooks.get(acme.id, webhook.id)).toBeNull();
    expect(await store().webhooks.list(acme.id)).toEqual([kept]);
    expect(await store().webhooks.listForEnvironment(production.id)).toEqual([kept]);
    expect(await store().webhooks.allEncryptedSecrets()).toEqual([
      { id: kept.id, encryptedSecret: "kept-secret" },
    ]);
    // The deleted webhook's row stays, but its secret is gone from storage too.
    expect(await storedWebhookSecret(webhook.id)).toBe("");
    expect(await storedWebhookSecret(kept.id)).toBe("kept-secret");
    expect(await store().webhooks.getDelivery(acme.id, attempted.id)).toMatchObject({
      status: "failed",
      nextAttemptAt: null,
    });
    expect(await store().webhooks.getDelivery(acme.id, queued.id)).toMatchObject({ status: "failed" });
    expect(await store().webhooks.getDelivery(acme.id, done.id)).toMatchObject({ status: "delivered" });
    expect(await store().webhooks.listAttempts(acme.id, { webhookId: webhook.id, limit: 10 })).toHaveLength(
      1,
    );
    // A manual redelivery of a deleted webhook's delivery is never due.
    await store().webhooks.requeue(queued.id, at(60));
    expect(await store().webhooks.dueDeliveries(at(100), 10)).toEqual([]);
    // Neither enabling nor deleting again revives it.
    await store().webhooks.setEnabled(webhook.id, true);
    expect(await store().webhooks.get(acme.id, webhook.id)).toBeNull();
    expect(await store().webhooks.delete(acme.id, webhook.id)).toBe(false);
  });

  test("secrets can be listed and replaced for key rotation", async () => {
    const mine = await addWebhook(production, { encryptedSecret: "old-1" });
    const theirs = await addWebhook(theirProduction, { encryptedSecret: "old-2" });
    const secrets = await store().webhooks.allEncryptedSecrets();
    expect(secrets).toHaveLength(2);
    expect(secrets).toContainEqual({ id: mine.id, encryptedSecret: "old-1" });
    await store().webhooks.updateEncryptedSecret(theirs.id, "new-2");
    expect((await store().webhooks.get(other.id, theirs.id))?.encryptedSecret).toBe("new-2");
    expect((await store().webhooks.get(acme.id, mine.id))?.encryptedSecret).toBe("old-1");
  });
};
