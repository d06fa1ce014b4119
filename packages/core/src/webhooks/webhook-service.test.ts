import { beforeEach, describe, expect, test } from "bun:test";
import { webhookSchema } from "@promptrun/contract";
import { PromptrunError } from "../errors.ts";
import type { Store } from "../ports.ts";
import { createSecretBox } from "../security/secret-box.ts";
import {
  addTenant,
  createMemoryStore,
  createTestConfig,
  manualClock,
  TEST_SECRET,
} from "../testing/index.ts";
import { enqueueDeliveries } from "./test-support.ts";
import { createWebhookService } from "./webhook-service.ts";

const tenantA = "00000000-0000-4000-8000-00000000000a";
const tenantB = "00000000-0000-4000-8000-00000000000b";
const secrets = createSecretBox(TEST_SECRET);
const clock = manualClock();

const rejection = async (promise: Promise<unknown>): Promise<PromptrunError> => {
  try {
    await promise;
  } catch (error) {
    if (PromptrunError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection");
};

let store: Store;
beforeEach(async () => {
  store = createMemoryStore();
  for (const tenantId of [tenantA, tenantB]) {
    await addTenant(store, "tenant", tenantId);
    await store.environments.ensure(tenantId, "production", crypto.randomUUID(), clock.now());
  }
});

const service = (allowPrivateUrls: boolean) =>
  createWebhookService({ store, config: createTestConfig({ allowPrivateUrls }), secrets, clock });

describe("webhook creation", () => {
  test("an environment holds at most maxWebhooksPerEnvironment webhooks; others are unaffected", async () => {
    const capped = createWebhookService({
      store,
      config: createTestConfig({ allowPrivateUrls: true, maxWebhooksPerEnvironment: 3 }),
      secrets,
      clock,
    });
    await store.environments.ensure(tenantA, "staging", crypto.randomUUID(), clock.now());
    const add = (tenantId: string, environment = "production") =>
      capped.create(tenantId, { environment, url: "http://127.0.0.1:9/hook" });
    const created = [await add(tenantA), await add(tenantA), await add(tenantA)];

    const refused = await rejection(add(tenantA));
    expect(refused.code).toBe("conflict");
    expect(refused.message).toBe(
      "environment 'production' already has 3 webhooks, the most allowed (3); delete one first",
    );
    expect(await store.webhooks.list(tenantA)).toHaveLength(3);
    // Another environment and another tenant still have room.
    await add(tenantA, "staging");
    await add(tenantB);
    // A deleted webhook frees its place.
    await capped.delete(tenantA, created[0]!.webhook.id);
    await add(tenantA);
  });

  test("returns a Standard Webhooks secret once and stores it only encrypted", async () => {
    const { webhook, secret } = await service(true).create(tenantA, {
      environment: "production",
      url: "http://127.0.0.1:9/hook",
    });
    expect(webhookSchema.parse(webhook)).toEqual(webhook);
    expect(webhook).toMatchObject({
      environment: "production",
      events: ["run.completed", "run.failed"],
      enabled: true,
      failureStreak: 0,
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice("whsec_".length), "base64").byteLength).toBe(32);

    const stored = await store.webhooks.get(tenantA, webhook.id);
    expect(stored?.encryptedSecret).not.toContain(secret.slice("whsec_".length));
    expect(secrets.decrypt(stored?.encryptedSecret ?? "")).toBe(secret);
    const listed = await service(true).list(tenantA);
    expect(listed).toEqual([webhook]);
    expect(JSON.stringify(listed)).not.toContain(secret.slice("whsec_".length));
  });

  test("keeps only the events asked for, once each", async () => {
    const { webhook } = await service(true).create(tenantA, {
      environment: "production",
      url: "https://example.com/hook",
      events: ["run.failed", "run.failed"],
    });
    expect(webhook.events).toEqual(["run.failed"]);
  });

  test("an unknown environment is a 400 naming it, and nothing is stored", async () => {
    const error = await rejection(
      service(true).create(tenantA, { environment: "staging", url: "http://127.0.0.1:9/hook" }),
    );
    expect(error.code).toBe("invalid");
    expect(error.message).toBe("unknown environment 'staging'");
    expect(await store.webhooks.list(tenantA)).toEqual([]);
  });

  test.each([
    "http://127.0.0.1:8080/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://[::1]/hook",
    "http://10.1.2.3/hook",
    "http://[::ffff:127.0.0.1]/hook",
  ])("refuses the private address %s unless private URLs are allowed", async (url) => {
    const error = await rejection(service(false).create(tenantA, { environment: "production", url }));
    expect(error.code).toBe("invalid");
    expect(error.message).toContain("private");
    expect(await store.webhooks.list(tenantA)).toEqual([]);
  });

  test("refuses a URL that is not http(s)", async () => {
    const error = await rejection(
      service(true).create(tenantA, { environment: "production", url: "ftp://example.com/hook" }),
    );
    expect(error.code).toBe("invalid");
    expect(error.message).toContain("url");
  });
});

describe("tenant scoping", () => {
  test("another tenant's webhook is not found for every operation", async () => {
    const webhooks = service(true);
    const { webhook } = await webhooks.create(tenantA, {
      environment: "production",
      url: "http://127.0.0.1:9/hook",
    });
    const deliveryId = crypto.randomUUID();
    await enqueueDeliveries(store, [
      {
        id: deliveryId,
        webhookId: webhook.id,
        tenantId: tenantA,
        runId: crypto.randomUUID(),
        eventId: null,
        eventType: "run.completed",
        payload: "{}",
        status: "failed",
        attempts: 3,
        nextAttemptAt: null,
        createdAt: clock.now(),
      },
    ]);

    expect(await webhooks.list(tenantB)).toEqual([]);
    for (const attempt of [
      webhooks.delete(tenantB, webhook.id),
      webhooks.setEnabled(tenantB, webhook.id, false),
      webhooks.attempts(tenantB, { webhookId: webhook.id }),
      webhooks.redeliver(tenantB, deliveryId),
    ]) {
      expect((await rejection(attempt)).code).toBe("not_found");
    }
    expect((await store.webhooks.get(tenantA, webhook.id))?.enabled).toBe(true);
    expect((await store.webhooks.getDelivery(tenantA, deliveryId))?.status).toBe("failed");

    await webhooks.redeliver(tenantA, deliveryId);
    expect((await store.webhooks.getDelivery(tenantA, deliveryId))?.status).toBe("pending");
    await webhooks.delete(tenantA, webhook.id);
    expect(await webhooks.list(tenantA)).toEqual([]);
  });

  test("setEnabled toggles and re-enabling clears the failure streak", async () => {
    const webhooks = service(true);
    const { webhook } = await webhooks.create(tenantA, {
      environment: "production",
      url: "http://127.0.0.1:9/hook",
    });
    expect((await webhooks.setEnabled(tenantA, webhook.id, false)).enabled).toBe(false);
    const enabled = await webhooks.setEnabled(tenantA, webhook.id, true);
    expect(enabled).toMatchObject({ enabled: true, failureStreak: 0 });
  });

  test("a delivery of a disabled webhook cannot be redelivered until it is enabled", async () => {
    const webhooks = service(true);
    const { webhook } = await webhooks.create(tenantA, {
      environment: "production",
      url: "http://127.0.0.1:9/hook",
    });
    const deliveryId = crypto.randomUUID();
    await enqueueDeliveries(store, [
      {
        id: deliveryId,
        webhookId: webhook.id,
        tenantId: tenantA,
        runId: crypto.randomUUID(),
        eventId: null,
        eventType: "run.failed",
        payload: "{}",
        status: "failed",
        attempts: 1,
        nextAttemptAt: null,
        createdAt: clock.now(),
      },
    ]);
    await webhooks.setEnabled(tenantA, webhook.id, false);
    expect((await rejection(webhooks.redeliver(tenantA, deliveryId))).code).toBe("conflict");
    expect((await store.webhooks.getDelivery(tenantA, deliveryId))?.status).toBe("failed");
  });
});
