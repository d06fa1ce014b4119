import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { promptRunSchema, type WebhookEventType, webhookPayloadSchema } from "@promptrun/contract";
import { Webhook } from "standardwebhooks";
import type { PromptrunConfig } from "../config.ts";
import type { Clock, RunRecord, Store, WebhookDeliveryRecord } from "../ports.ts";
import { createSecretBox } from "../security/secret-box.ts";
import { addTenant, createMemoryStore, createTestConfig, TEST_SECRET } from "../testing/index.ts";
import { enqueueDeliveries, finishedRun, type Receiver, startReceiver, waitFor } from "./test-support.ts";
import { createWebhookDispatcher, type WebhookDispatcher } from "./webhook-dispatcher.ts";
import { createWebhookService } from "./webhook-service.ts";

const tenantId = "00000000-0000-4000-8000-00000000000a";
const secrets = createSecretBox(TEST_SECRET);
// Real time: retries are due after real (shortened) delays, and Standard Webhooks verification
// checks the signed timestamp against the current time.
const clock: Clock = { now: () => new Date() };

let store: Store;
let receiver: Receiver;
let dispatchers: WebhookDispatcher[];
const errors: unknown[] = [];

beforeEach(async () => {
  store = createMemoryStore();
  receiver = startReceiver();
  dispatchers = [];
  errors.length = 0;
  await addTenant(store, "acme", tenantId);
  await store.environments.ensure(tenantId, "production", crypto.randomUUID(), clock.now());
  await store.environments.ensure(tenantId, "staging", crypto.randomUUID(), clock.now());
});

afterEach(async () => {
  await Promise.all(dispatchers.map((dispatcher) => dispatcher.stop()));
  await receiver.stop();
  expect(errors).toEqual([]);
});

const testConfig = (overrides: Partial<PromptrunConfig> = {}) =>
  createTestConfig({
    allowPrivateUrls: true,
    webhookRetrySchedule: [0.05, 0.1],
    webhookTimeoutMs: 2_000,
    ...overrides,
  });

const dispatcher = (overrides: Partial<PromptrunConfig> = {}) => {
  const created = createWebhookDispatcher({
    store,
    config: testConfig(overrides),
    secrets,
    clock,
    pollIntervalMs: 10,
    random: () => 0,
    onError: (error) => errors.push(error),
  });
  dispatchers.push(created);
  return created;
};

const addWebhook = async (
  input: { environment?: string; path?: string; url?: string; events?: WebhookEventType[] } = {},
) =>
  createWebhookService({ store, config: testConfig(), secrets, clock }).create(tenantId, {
    environment: input.environment ?? "production",
    url: input.url ?? receiver.url(input.path ?? "/hook"),
    ...(input.events ? { events: input.events } : {}),
  });

/** What the engine does when a run ends: build the outbox rows and store them. */
const finish = async (sender: WebhookDispatcher, run: RunRecord) => {
  const deliveries = await sender.buildDeliveries(run);
  await enqueueDeliveries(store, deliveries);
  sender.wake();
  return deliveries;
};

const attemptsOf = async (runId: string) =>
  (await store.webhooks.listAttempts(tenantId, { runId, limit: 100 })).sort((a, b) => a.attempt - b.attempt);

const deliveryStatus = async (id: string) => (await store.webhooks.getDelivery(tenantId, id))?.status;

describe("delivery", () => {
  test("posts the signed Standard Webhooks payload once and logs the attempt", async () => {
    const { secret } = await addWebhook();
    const sender = dispatcher();
    sender.start();
    const run = finishedRun({ tenantId });
    const [delivery] = await finish(sender, run);
    await waitFor(async () => (await deliveryStatus(delivery!.id)) === "delivered");

    expect(receiver.requests).toHaveLength(1);
    const request = receiver.requests[0]!;
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["webhook-id"]).toBe(delivery!.id);
    const verified = new Webhook(secret).verify(request.body, request.headers);
    const payload = webhookPayloadSchema.parse(verified);
    expect(payload.type).toBe("run.completed");
    expect(payload.timestamp).toBe(run.finishedAt!.toISOString());
    expect(promptRunSchema.parse(payload.data)).toMatchObject({
      id: run.id,
      status: "completed",
      output: "Hello, Ada!",
      thread: run.threadId,
      prompt: { slug: "greet", version: 2 },
      environment: "production",
      metadata: { customer: "acme" },
    });
    // A signature made with another secret does not verify.
    const otherSecret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    expect(() => new Webhook(otherSecret).verify(request.body, request.headers)).toThrow();

    const [attempt, ...more] = await attemptsOf(run.id);
    expect(more).toEqual([]);
    expect(attempt).toMatchObject({ attempt: 1, responseStatus: 200, error: null, deliveryId: delivery!.id });
    expect(attempt!.latencyMs).toBeGreaterThanOrEqual(0);
  });

  test("dispatchers of several instances on one store send each delivery once", async () => {
    await addWebhook();
    // The receiver is slow: every dispatcher polls the due delivery while the first one sends it.
    let release: () => void = () => {};
    receiver.reply("/hook", { status: 200, waitFor: new Promise<void>((resolve) => (release = resolve)) });
    const senders = [dispatcher(), dispatcher(), dispatcher()];
    for (const sender of senders) sender.start();
    const runs = Array.from({ length: 5 }, () => finishedRun({ tenantId }));
    const deliveries = (await Promise.all(runs.map((run) => senders[0]!.buildDeliveries(run)))).flat();
    await enqueueDeliveries(store, deliveries);
    for (const sender of senders) sender.wake();
    await waitFor(() => receiver.requests.length >= 1);
    await Bun.sleep(100);
    release();
    await waitFor(async () => {
      const statuses = await Promise.all(deliveries.map((delivery) => deliveryStatus(delivery.id)));
      return statuses.every((status) => status === "delivered");
    });
    expect(receiver.requests.map((request) => request.headers["webhook-id"]).sort()).toEqual(
      deliveries.map((delivery) => delivery.id).sort(),
    );
    for (const run of runs) expect(await attemptsOf(run.id)).toHaveLength(1);
  });

  test("a failed run fires run.failed, only to hooks subscribed to it", async () => {
    await addWebhook({ path: "/completed-only", events: ["run.completed"] });
    await addWebhook({ path: "/failed-only", events: ["run.failed"] });
    const sender = dispatcher();
    sender.start();
    const run = finishedRun({ tenantId, status: "failed", output: null, tokenUsage: null, error: "boom" });
    const deliveries = await finish(sender, run);
    expect(deliveries.map((delivery) => delivery.eventType)).toEqual(["run.failed"]);
    await waitFor(async () => (await deliveryStatus(deliveries[0]!.id)) === "delivered");
    expect(receiver.requests.map((request) => request.path)).toEqual(["/failed-only"]);
    expect(JSON.parse(receiver.requests[0]!.body)).toMatchObject({
      type: "run.failed",
      data: { status: "failed", error: "boom", output: null },
    });
  });

  test("a staging run reaches staging hooks only, never production ones; disabled hooks get nothing", async () => {
    await addWebhook({ environment: "production", path: "/production" });
    const disabled = await addWebhook({ environment: "staging", path: "/staging-disabled" });
    await store.webhooks.setEnabled(disabled.webhook.id, false);
    await addWebhook({ environment: "staging", path: "/staging" });
    const sender = dispatcher();
    sender.start();
    const deliveries = await finish(sender, finishedRun({ tenantId, environment: "staging" }));
    expect(deliveries).toHaveLength(1);
    await waitFor(async () => (await deliveryStatus(deliveries[0]!.id)) === "delivered");
    expect(receiver.requests.map((request) => request.path)).toEqual(["/staging"]);
    expect(JSON.parse(receiver.requests[0]!.body).data.environment).toBe("staging");
  });

  test("the deliveries of one webhook go out in creation order", async () => {
    await addWebhook();
    const sender = dispatcher();
    const runs = [0, 1, 2, 3].map(() => finishedRun({ tenantId }));
    const ids: string[] = [];
    for (const run of runs) ids.push(...(await finish(sender, run)).map((delivery) => delivery.id));
    sender.start();
    await waitFor(() => receiver.requests.length === 4);
    expect(receiver.requests.map((request) => request.headers["webhook-id"])).toEqual(ids);
    expect(receiver.requests.map((request) => JSON.parse(request.body).data.id)).toEqual(
      runs.map((run) => run.id),
    );
  });
});

describe("retries", () => {
  test("retries after 500s with the same webhook-id, each attempt signed and logged", async () => {
    const { secret } = await addWebhook();
    receiver.reply("/hook", 500, 503);
    const sender = dispatcher();
    sender.start();
    const run = finishedRun({ tenantId });
    const [delivery] = await finish(sender, run);
    await waitFor(async () => (await deliveryStatus(delivery!.id)) === "delivered");

    expect(receiver.requests).toHaveLength(3);
    for (const request of receiver.requests) {
      expect(request.headers["webhook-id"]).toBe(delivery!.id);
      expect(new Webhook(secret).verify(request.body, request.headers)).toBeTruthy();
      expect(request.body).toBe(receiver.requests[0]!.body);
    }
    const attempts = await attemptsOf(run.id);
    expect(attempts.map((attempt) => [attempt.attempt, attempt.responseStatus])).toEqual([
      [1, 500],
      [2, 503],
      [3, 200],
    ]);
    // The schedule's delays (50 ms, then 100 ms) separate the attempts at least.
    expect(attempts[1]!.attemptedAt.getTime() - attempts[0]!.attemptedAt.getTime()).toBeGreaterThanOrEqual(
      50,
    );
    expect(attempts[2]!.attemptedAt.getTime() - attempts[1]!.attemptedAt.getTime()).toBeGreaterThanOrEqual(
      100,
    );
    expect((await store.webhooks.list(tenantId))[0]!.failureStreak).toBe(0);
  });

  test("a receiver that does not answer in time is a failed attempt, then retried", async () => {
    await addWebhook();
    let release = () => {};
    const hang = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver.reply("/hook", { waitFor: hang, status: 200 }, 204);
    const sender = dispatcher({ webhookTimeoutMs: 200 });
    sender.start();
    const run = finishedRun({ tenantId });
    const [delivery] = await finish(sender, run);
    await waitFor(async () => (await deliveryStatus(delivery!.id)) === "delivered");
    release();

    const attempts = await attemptsOf(run.id);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ attempt: 1, responseStatus: null, error: "timed out after 200 ms" });
    expect(attempts[0]!.latencyMs).toBeGreaterThanOrEqual(190);
    expect(attempts[1]).toMatchObject({ attempt: 2, responseStatus: 204, error: null });
    expect(receiver.requests.map((request) => request.headers["webhook-id"])).toEqual([
      delivery!.id,
      delivery!.id,
    ]);
  });

  test("fails the delivery once the schedule is exhausted and counts it in the streak", async () => {
    const { webhook } = await addWebhook();
    receiver.fallback = 500;
    const sender = dispatcher();
    sender.start();
    const run = finishedRun({ tenantId });
    const [delivery] = await finish(sender, run);
    await waitFor(async () => (await deliveryStatus(delivery!.id)) === "failed");

    const stored = await store.webhooks.getDelivery(tenantId, delivery!.id);
    expect(stored).toMatchObject({ status: "failed", attempts: 3, nextAttemptAt: null });
    expect((await attemptsOf(run.id)).map((attempt) => attempt.responseStatus)).toEqual([500, 500, 500]);
    expect(await store.webhooks.get(tenantId, webhook.id)).toMatchObject({ failureStreak: 1, enabled: true });
    // Nothing more is sent for it.
    await Bun.sleep(200);
    expect(receiver.requests).toHaveLength(3);
  });

  test("network errors are failed attempts with the error logged", async () => {
    // A port nothing listens on: that receiver is stopped and its port is free.
    const closed = startReceiver();
    const deadUrl = closed.url("/gone");
    await closed.stop();
    await addWebhook({ url: deadUrl });
    const sender = dispatcher({ webhookRetrySchedule: [] });
    sender.start();
    const run = finishedRun({ tenantId });
    const [delivery] = await finish(sender, run);
    await waitFor(async () => (await deliveryStatus(delivery!.id)) === "failed");
    const [attempt] = await attemptsOf(run.id);
    expect(attempt!.responseStatus).toBeNull();
    expect(attempt!.error).toMatch(/ECONNREFUSED|connect/i);
  });

  test("disables the webhook after webhookDisableAfter failed deliveries in a row", async () => {
    const { webhook } = await addWebhook();
    receiver.fallback = 500;
    const sender = dispatcher({ webhookRetrySchedule: [0.05], webhookDisableAfter: 2 });
    const deliveries: WebhookDeliveryRecord[] = [];
    for (let index = 0; index < 3; index++)
      deliveries.push(...(await finish(sender, finishedRun({ tenantId }))));
    sender.start();
    await waitFor(async () => {
      const statuses = await Promise.all(deliveries.map((delivery) => deliveryStatus(delivery.id)));
      return statuses.every((status) => status === "failed");
    });

    expect(await store.webhooks.get(tenantId, webhook.id)).toMatchObject({
      enabled: false,
      failureStreak: 2,
    });
    // 3 first attempts, then 2 second attempts that exhaust two deliveries; the third delivery's
    // second attempt finds the webhook disabled and is not sent.
    expect(receiver.requests).toHaveLength(5);
    const attempts = await store.webhooks.listAttempts(tenantId, { webhookId: webhook.id, limit: 100 });
    const notSent = attempts.filter((attempt) => attempt.error === "not sent: the webhook is disabled");
    expect(notSent).toHaveLength(1);
    expect(notSent[0]).toMatchObject({ attempt: 2, responseStatus: null });
  });

  test("a success resets the failure streak", async () => {
    const { webhook } = await addWebhook();
    receiver.reply("/hook", 500);
    const sender = dispatcher({ webhookRetrySchedule: [], webhookDisableAfter: 2 });
    sender.start();
    const [first] = await finish(sender, finishedRun({ tenantId }));
    await waitFor(async () => (await deliveryStatus(first!.id)) === "failed");
    expect((await store.webhooks.get(tenantId, webhook.id))?.failureStreak).toBe(1);
    const [second] = await finish(sender, finishedRun({ tenantId }));
    await waitFor(async () => (await deliveryStatus(second!.id)) === "delivered");
    expect(await store.webhooks.get(tenantId, webhook.id)).toMatchObject({ failureStreak: 0, enabled: true });
  });
});

describe("redelivery, guards and restarts", () => {
  test("a redelivered delivery is sent again with the same webhook-id and logged as the next attempt", async () => {
    const { secret } = await addWebhook();
    receiver.reply("/hook", 500);
    const sender = dispatcher({ webhookRetrySchedule: [] });
    const service = createWebhookService({
      store,
      config: testConfig(),
      secrets,
      clock,
      onRequeue: () => sender.wake(),
    });
    sender.start();
    const run = finishedRun({ tenantId });
    const [delivery] = await finish(sender, run);
    await waitFor(async () => (await deliveryStatus(delivery!.id)) === "failed");

    await service.redeliver(tenantId, delivery!.id);
    await waitFor(async () => (await deliveryStatus(delivery!.id)) === "delivered");
    expect(receiver.requests.map((request) => request.headers["webhook-id"])).toEqual([
      delivery!.id,
      delivery!.id,
    ]);
    expect(
      new Webhook(secret).verify(receiver.requests[1]!.body, receiver.requests[1]!.headers),
    ).toBeTruthy();
    const attempts = await service.attempts(tenantId, { runId: run.id });
    expect(attempts.map((attempt) => [attempt.attempt, attempt.responseStatus])).toEqual([
      [2, 200],
      [1, 500],
    ]);
    expect(attempts[0]).toMatchObject({ webhookId: delivery!.webhookId, eventType: "run.completed" });
  });

  test("re-checks the address at send time: a private target is refused when not allowed", async () => {
    await addWebhook(); // registered while private URLs were allowed
    const sender = dispatcher({ allowPrivateUrls: false, webhookRetrySchedule: [] });
    sender.start();
    const run = finishedRun({ tenantId });
    const [delivery] = await finish(sender, run);
    await waitFor(async () => (await deliveryStatus(delivery!.id)) === "failed");
    expect(receiver.requests).toHaveLength(0);
    const [attempt] = await attemptsOf(run.id);
    expect(attempt!.error).toContain("private");
  });

  test("deliveries stored before a (re)start are sent by a new dispatcher; stop waits for sends in flight", async () => {
    await addWebhook();
    const first = dispatcher();
    const [delivery] = await finish(first, finishedRun({ tenantId })); // never started: the process "died"

    let release = () => {};
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver.reply("/hook", { waitFor: slow, status: 200 });
    const second = dispatcher();
    second.start();
    await waitFor(() => receiver.requests.length === 1);
    const stopped = second.stop().then(() => "stopped");
    // stop() is still waiting for the send; the delivery is not recorded yet.
    expect(await Promise.race([stopped, Bun.sleep(50).then(() => "waiting")])).toBe("waiting");
    release();
    expect(await stopped).toBe("stopped");
    expect(await deliveryStatus(delivery!.id)).toBe("delivered");
  });

  test("a delivery left pending by a process that died mid-send is simply sent again", async () => {
    const { secret } = await addWebhook();
    const sender = dispatcher();
    const run = finishedRun({ tenantId });
    const [delivery] = await sender.buildDeliveries(run);
    // The row as a crash would leave it: pending, attempted once, due in the past.
    await enqueueDeliveries(store, [
      { ...delivery!, attempts: 1, nextAttemptAt: new Date(Date.now() - 60_000) },
    ]);
    sender.start();
    await waitFor(async () => (await deliveryStatus(delivery!.id)) === "delivered");
    expect(receiver.requests[0]!.headers["webhook-id"]).toBe(delivery!.id);
    expect(
      new Webhook(secret).verify(receiver.requests[0]!.body, receiver.requests[0]!.headers),
    ).toBeTruthy();
    expect((await attemptsOf(run.id)).map((attempt) => attempt.attempt)).toEqual([2]);
  });
});
