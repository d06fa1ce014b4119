import { beforeEach, expect, test } from "bun:test";
import type { PromptOutbox, PromptVersionRecord, TenantRecord, WebhookDeliveryRecord } from "@promptrun/core";
import { addTenant, at, definitionOf, pushPrompt } from "@promptrun/core/testing";
import type { ConformanceContext } from "./conformance-context.ts";

/**
 * A prompt write and its webhook outbox rows commit together or not at all
 * (docs/PRODUCT-RULES.md "Environments, env vars and webhooks").
 */
export const promptOutboxConformance = ({ store }: ConformanceContext): void => {
  let acme: TenantRecord;
  let webhookId: string;
  beforeEach(async () => {
    acme = await addTenant(store(), "acme");
    const production = await store().environments.ensure(acme.id, "production", Bun.randomUUIDv7(), at(0));
    webhookId = Bun.randomUUIDv7();
    await store().webhooks.create({
      id: webhookId,
      tenantId: acme.id,
      environmentId: production.id,
      environment: "production",
      url: "https://example.com/hook",
      encryptedSecret: "encrypted-whsec",
      events: ["prompt.version.created", "prompt.tag.moved"],
      enabled: true,
      failureStreak: 0,
      createdAt: at(0),
    });
  });

  /** One event's row for `target`, its body naming the version the store decided. */
  const rowsFor =
    (target: () => string, eventId: string) =>
    ({ version }: { version: PromptVersionRecord }): WebhookDeliveryRecord[] => [
      {
        id: Bun.randomUUIDv7(),
        webhookId: target(),
        tenantId: acme.id,
        runId: null,
        eventId,
        eventType: "prompt.version.created",
        payload: JSON.stringify({ type: "prompt.version.created", data: { version: version.version } }),
        status: "pending",
        attempts: 0,
        nextAttemptAt: at(1),
        createdAt: at(1),
      },
    ];

  const pushWith = (text: string, outbox: PromptOutbox<{ version: PromptVersionRecord; created: boolean }>) =>
    store().prompts.pushVersion({
      tenantId: acme.id,
      slug: "greet",
      definition: definitionOf(text),
      contentHash: `hash-of-${text}`,
      tags: ["prod"],
      newPromptId: Bun.randomUUIDv7(),
      newVersionId: Bun.randomUUIDv7(),
      at: at(1),
      outbox,
    });

  test("a push writes its version and its outbox rows in one transaction", async () => {
    const eventId = Bun.randomUUIDv7();
    const pushed = await pushWith(
      "hello",
      rowsFor(() => webhookId, eventId),
    );
    expect(pushed.version.version).toBe(1);
    expect(await store().webhooks.getEventPayload(eventId)).toBe(
      JSON.stringify({ type: "prompt.version.created", data: { version: 1 } }),
    );
    const due = await store().webhooks.dueDeliveries(at(5), 10);
    expect(due.map((row) => [row.webhookId, row.eventId])).toEqual([[webhookId, eventId]]);
  });

  test("a push whose outbox rows cannot be written leaves no version, no tag and no event", async () => {
    await pushPrompt(store(), acme.id, "greet", "first");
    const eventId = Bun.randomUUIDv7();
    const unknownWebhook = Bun.randomUUIDv7();
    await expect(
      pushWith(
        "second",
        rowsFor(() => unknownWebhook, eventId),
      ),
    ).rejects.toThrow();
    expect((await store().prompts.getPrompt(acme.id, "greet"))?.latestVersion).toBe(1);
    expect((await store().prompts.getPrompt(acme.id, "greet"))?.tags).toEqual({});
    expect(await store().prompts.countVersions(acme.id)).toBe(1);
    expect(await store().webhooks.getEventPayload(eventId)).toBeNull();
    expect(await store().webhooks.dueDeliveries(at(5), 10)).toEqual([]);

    // A new prompt is not created either.
    await expect(
      store().prompts.pushVersion({
        tenantId: acme.id,
        slug: "fresh",
        definition: definitionOf("fresh"),
        contentHash: "hash-of-fresh",
        tags: [],
        newPromptId: Bun.randomUUIDv7(),
        newVersionId: Bun.randomUUIDv7(),
        at: at(2),
        outbox: rowsFor(() => unknownWebhook, Bun.randomUUIDv7()),
      }),
    ).rejects.toThrow();
    expect(await store().prompts.getPrompt(acme.id, "fresh")).toBeNull();
  });

  test("setTag and moveTag whose outbox rows cannot be written leave the tag where it was", async () => {
    await pushPrompt(store(), acme.id, "greet", "first");
    await pushPrompt(store(), acme.id, "greet", "second");
    const failing = rowsFor(() => Bun.randomUUIDv7(), Bun.randomUUIDv7());
    await expect(
      store().prompts.setTag(
        acme.id,
        "greet",
        { kind: "number", version: 1 },
        "prod",
        at(3),
        "cli",
        (version) => failing({ version }),
      ),
    ).rejects.toThrow();
    const move = { tenantId: acme.id, slug: "greet", tag: "prod", version: 2, at: at(4), movedBy: "cli" };
    await expect(store().prompts.moveTag({ ...move, outbox: failing })).rejects.toThrow();
    expect((await store().prompts.getPrompt(acme.id, "greet"))?.tags).toEqual({});
    expect((await store().prompts.listTagHistory(acme.id, "greet", "prod", { limit: 10 })).items).toEqual([]);

    const eventId = Bun.randomUUIDv7();
    expect(
      await store().prompts.moveTag({ ...move, outbox: rowsFor(() => webhookId, eventId) }),
    ).toMatchObject({
      outcome: "moved",
      previousVersion: null,
    });
    expect((await store().prompts.getPrompt(acme.id, "greet"))?.tags).toEqual({ prod: 2 });
    expect(await store().webhooks.getEventPayload(eventId)).toContain('"version":2');
  });
};
