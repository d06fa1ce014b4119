import { afterEach, expect, test } from "bun:test";
import type { Clock, Store } from "../ports.ts";
import { createSecretBox } from "../security/secret-box.ts";
import { addTenant, createMemoryStore, createTestConfig, TEST_SECRET } from "../testing/index.ts";
import { enqueueDeliveries, finishedRun, type Receiver, startReceiver, waitFor } from "./test-support.ts";
import { createWebhookDispatcher, type WebhookDispatcher } from "./webhook-dispatcher.ts";
import { createWebhookService } from "./webhook-service.ts";

const attacker = "00000000-0000-4000-8000-0000000000a1";
const victim = "00000000-0000-4000-8000-0000000000b2";
const secrets = createSecretBox(TEST_SECRET);
const clock: Clock = { now: () => new Date() };
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  // In order: the black hole closes first, so the dispatcher's stop does not wait out hung attempts.
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A receiver that accepts connections and never answers (until the test ends). */
const startBlackHole = () => {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let requests = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch() {
      requests++;
      await released;
      return new Response(null, { status: 200 });
    },
  });
  cleanups.push(() => server.stop(true), release);
  return { url: (path: string) => `http://127.0.0.1:${server.port}${path}`, requests: () => requests };
};

test("a tenant's never-answering receivers do not hold back another tenant's delivery", async () => {
  const store: Store = createMemoryStore();
  // Long enough that waiting for a hung attempt to time out shows up clearly.
  const config = createTestConfig({
    allowPrivateUrls: true,
    webhookTimeoutMs: 8_000,
    webhookRetrySchedule: [60],
  });
  const service = createWebhookService({ store, config, secrets, clock });
  for (const tenant of [attacker, victim]) {
    await addTenant(store, "tenant", tenant);
    await store.environments.ensure(tenant, "production", crypto.randomUUID(), clock.now());
  }
  const blackHole = startBlackHole();
  const receiver: Receiver = startReceiver();
  cleanups.push(() => receiver.stop());
  for (let index = 0; index < 16; index++) {
    await service.create(attacker, { environment: "production", url: blackHole.url(`/hang/${index}`) });
  }
  await service.create(victim, { environment: "production", url: receiver.url("/victim") });

  const errors: unknown[] = [];
  const sender: WebhookDispatcher = createWebhookDispatcher({
    store,
    config,
    secrets,
    clock,
    pollIntervalMs: 10,
    // A small read: the attacker's backlog alone could fill it.
    batchSize: 20,
    onError: (error) => errors.push(error),
  });
  cleanups.push(() => sender.stop());
  // The attacker's backlog is older: 3 runs × 16 webhooks before the victim's one run.
  for (let index = 0; index < 3; index++) {
    await enqueueDeliveries(store, await sender.buildDeliveries(finishedRun({ tenantId: attacker })));
  }
  await Bun.sleep(5);
  sender.start();
  await waitFor(() => blackHole.requests() >= 1);

  const startedAt = performance.now();
  await enqueueDeliveries(store, await sender.buildDeliveries(finishedRun({ tenantId: victim })));
  sender.wake();
  await waitFor(() => receiver.requests.length >= 1, "the victim's delivery", 20_000);
  const waitedMs = performance.now() - startedAt;

  // Well under one attempt timeout (8 s): the victim never waited for a hung attempt to end.
  expect(waitedMs).toBeLessThan(3_000);
  // The attacker holds at most its per-tenant share of the slots.
  expect(blackHole.requests()).toBeLessThanOrEqual(config.webhookTenantConcurrency);
  expect(errors).toEqual([]);
}, 30_000);

test("a webhook whose name re-resolves to 127.0.0.1 after the check is never sent there", async () => {
  const store: Store = createMemoryStore();
  const config = createTestConfig({
    allowPrivateUrls: false,
    webhookTimeoutMs: 1_000,
    webhookRetrySchedule: [60],
  });
  await addTenant(store, "victim", victim);
  const environment = await store.environments.ensure(victim, "production", crypto.randomUUID(), clock.now());
  const receiver: Receiver = startReceiver();
  cleanups.push(() => receiver.stop());
  // Registered while the name still resolved publicly (the store is written directly: the
  // service would check the name against the system resolver, for which `localhost` is private).
  await store.webhooks.create({
    id: crypto.randomUUID(),
    tenantId: victim,
    environmentId: environment.id,
    environment: "production",
    url: receiver.url("/hook").replace("127.0.0.1", "localhost"),
    encryptedSecret: secrets.encrypt(`whsec_${Buffer.alloc(32, 1).toString("base64")}`),
    events: ["run.completed", "run.failed"],
    enabled: true,
    failureStreak: 0,
    createdAt: clock.now(),
  });
  const sender = createWebhookDispatcher({
    store,
    config,
    secrets,
    clock,
    pollIntervalMs: 10,
    // The guard's answer is public; the system resolver a second lookup would use says 127.0.0.1.
    resolve: async () => ["8.8.8.8"],
    onError: (error) => {
      throw error;
    },
  });
  cleanups.push(() => sender.stop());
  const run = finishedRun({ tenantId: victim });
  await enqueueDeliveries(store, await sender.buildDeliveries(run));
  sender.start();
  await waitFor(
    async () => (await store.webhooks.listAttempts(victim, { runId: run.id, limit: 10 })).length > 0,
  );

  const [attempt] = await store.webhooks.listAttempts(victim, { runId: run.id, limit: 10 });
  expect(attempt?.responseStatus).toBeNull();
  expect(attempt?.error).not.toBeNull();
  expect(receiver.requests).toHaveLength(0);
});
