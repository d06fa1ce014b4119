import { afterEach, beforeEach, expect, test } from "bun:test";
import { type WebhookEventType, webhookPayloadSchema } from "@promptrun/contract";
import { Webhook } from "standardwebhooks";
import type { Clock, Store } from "../ports.ts";
import { createSecretBox } from "../security/secret-box.ts";
import { createPromptService } from "../services/prompt-service.ts";
import { addTenant, createMemoryStore, createTestConfig, TEST_SECRET } from "../testing/index.ts";
import { greetPrompt } from "../testing/service-fixture.ts";
import { type Receiver, startReceiver, waitFor } from "./test-support.ts";
import { createWebhookDispatcher, type WebhookDispatcher } from "./webhook-dispatcher.ts";
import { createWebhookService } from "./webhook-service.ts";

const tenantId = "00000000-0000-4000-8000-00000000000a";
const otherTenantId = "00000000-0000-4000-8000-00000000000b";
const secrets = createSecretBox(TEST_SECRET);
const clock: Clock = { now: () => new Date() };
const config = createTestConfig({
  allowPrivateUrls: true,
  webhookRetrySchedule: [0.05, 0.1],
  webhookTimeoutMs: 2_000,
});

let store: Store;
let receiver: Receiver;
let sender: WebhookDispatcher;
const errors: unknown[] = [];

beforeEach(async () => {
  store = createMemoryStore();
  receiver = startReceiver();
  errors.length = 0;
  for (const id of [tenantId, otherTenantId]) {
    await addTenant(store, id === tenantId ? "acme" : "other", id);
    await store.environments.ensure(id, "production", crypto.randomUUID(), clock.now());
  }
  sender = createWebhookDispatcher({
    store,
    config,
    secrets,
    clock,
    pollIntervalMs: 10,
    random: () => 0,
    onError: (error) => errors.push(error),
  });
  sender.start();
});

afterEach(async () => {
  await sender.stop();
  await receiver.stop();
  expect(errors).toEqual([]);
});

const prompts = () =>
  createPromptService({ store, clock, providers: config, onEnqueue: () => sender.wake() });

const addWebhook = (tenant: string, path: string, events?: WebhookEventType[]) =>
  createWebhookService({ store, config, secrets, clock }).create(tenant, {
    environment: "production",
    url: receiver.url(path),
    ...(events ? { events } : {}),
  });

const received = (path: string) => receiver.requests.filter((request) => request.path === path);

test("a push sends prompt.version.created and prompt.tag.moved, signed, to the webhooks naming them", async () => {
  const { secret } = await addWebhook(tenantId, "/prompts", ["prompt.version.created", "prompt.tag.moved"]);
  await addWebhook(tenantId, "/runs");
  await addWebhook(otherTenantId, "/other", ["prompt.version.created", "prompt.tag.moved"]);

  const [pushed] = await prompts().push(tenantId, [greetPrompt]);
  await waitFor(async () => received("/prompts").length === 2);
  const payloads = received("/prompts").map((request) =>
    webhookPayloadSchema.parse(new Webhook(secret).verify(request.body, request.headers)),
  );
  expect(payloads.map(({ type, data }) => ({ type, data }))).toEqual([
    { type: "prompt.version.created", data: { slug: "greet", version: 1, id: pushed!.id } },
    {
      type: "prompt.tag.moved",
      data: { slug: "greet", tag: "production", version: 1, previousVersion: null },
    },
  ]);

  // An identical push creates nothing and moves nothing; a tag move names where it came from.
  await prompts().push(tenantId, [greetPrompt]);
  await prompts().push(tenantId, [{ ...greetPrompt, tags: [], params: { temperature: 0.3 } }]);
  await prompts().tag(tenantId, "greet", "2", "production");
  await prompts().tag(tenantId, "greet", "2", "production");
  await waitFor(async () => received("/prompts").length === 4);
  const later = received("/prompts")
    .slice(2)
    .map((request) => webhookPayloadSchema.parse(JSON.parse(request.body)));
  expect(later.map(({ type, data }) => ({ type, data }))).toEqual([
    { type: "prompt.version.created", data: expect.objectContaining({ slug: "greet", version: 2 }) },
    { type: "prompt.tag.moved", data: { slug: "greet", tag: "production", version: 2, previousVersion: 1 } },
  ]);
  await Bun.sleep(100);
  expect(received("/prompts")).toHaveLength(4);
  expect(received("/runs")).toEqual([]);
  expect(received("/other")).toEqual([]);
  const attempts = await store.webhooks.listAttempts(tenantId, { limit: 10 });
  expect(attempts.every((attempt) => attempt.runId === null && attempt.responseStatus === 200)).toBe(true);
});

test("a prompt event is retried with the same id and body until delivered", async () => {
  await addWebhook(tenantId, "/flaky", ["prompt.version.created"]);
  receiver.reply("/flaky", 500);
  await prompts().push(tenantId, [{ ...greetPrompt, tags: [] }]);
  await waitFor(async () => received("/flaky").length === 2);
  const [first, second] = received("/flaky");
  expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
  expect(second!.body).toBe(first!.body);
  const [delivery] = await store.webhooks.listAttempts(tenantId, { limit: 10 });
  await waitFor(
    async () => (await store.webhooks.getDelivery(tenantId, delivery!.deliveryId))?.status === "delivered",
  );
});
