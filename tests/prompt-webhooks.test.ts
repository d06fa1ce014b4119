/**
 * Prompt webhook events end to end (docs/PRODUCT-RULES.md "Environments, env vars and webhooks"):
 * prompt.version.created and prompt.tag.moved reach a real receiver on 127.0.0.1, signed per
 * Standard Webhooks, only for webhooks that name them and only within their tenant; redelivery
 * sends the same event again.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTenant, echoPrompt, pushPrompts } from "./hardening/support.ts";
import { api, startServer, type TestServer } from "./support/server.ts";
import { startWebhookReceiver as startReceiver } from "./support/webhook-receiver.ts";

const waitUntil = async (condition: () => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(25);
  }
};

let server: TestServer;
const named = startReceiver();
const unnamed = startReceiver();
const otherTenant = startReceiver();
beforeAll(async () => {
  server = await startServer();
  const add = async (tenantId: string, url: string, events?: string) => {
    const added = await server.cli<{ secret: string }>(
      "webhooks",
      "add",
      tenantId,
      "production",
      url,
      ...(events ? ["--events", events] : []),
    );
    if (added.code !== 0) throw new Error(`webhooks add failed: ${added.stderr}`);
    return added.json.secret;
  };
  named.secret.value = await add(server.tenantId, named.url, "prompt.version.created,prompt.tag.moved");
  unnamed.secret.value = await add(server.tenantId, unnamed.url);
  const other = await createTenant(server, "other");
  otherTenant.secret.value = await add(other.id, otherTenant.url, "prompt.version.created,prompt.tag.moved");
});
afterAll(async () => {
  for (const receiver of [named, unnamed, otherTenant]) receiver.stop();
  await server?.dispose();
});

const eventsOf = (slug: string) =>
  named.received.filter((item) => item.payload.data.slug === slug).map((item) => item.payload);

const trpc = (procedure: string, input: unknown) =>
  fetch(`${server.url}/trpc/${procedure}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(input),
  });

describe(`prompt webhooks (${process.env.PROMPTRUN_E2E_DATABASE ?? "sqlite"})`, () => {
  test("REST push → prompt.version.created (and the new tag), signed; none for an identical push", async () => {
    const prompt = { ...echoPrompt("rest-hooked"), tags: ["stable"] };
    const response = await api(server, "/api/v1/prompts", { method: "POST", json: prompt });
    expect(response.status).toBeLessThan(300);
    const { id } = (await response.json()) as { id: string };
    await waitUntil(() => eventsOf("rest-hooked").length === 2);
    expect(eventsOf("rest-hooked")).toEqual([
      {
        type: "prompt.version.created",
        timestamp: expect.any(String),
        data: { slug: "rest-hooked", version: 1, id },
      },
      {
        type: "prompt.tag.moved",
        timestamp: expect.any(String),
        data: { slug: "rest-hooked", tag: "stable", version: 1, previousVersion: null },
      },
    ]);
    expect(await api(server, "/api/v1/prompts", { method: "POST", json: prompt })).toHaveProperty(
      "status",
      200,
    );
    await Bun.sleep(600);
    expect(eventsOf("rest-hooked")).toHaveLength(2);
  });

  test("REST tag move (PUT …/tags/{tag}) → prompt.tag.moved; a move to where it points sends none", async () => {
    await pushPrompts(server, server.tenantId, [echoPrompt("rest-moved")]);
    await pushPrompts(server, server.tenantId, [
      { ...echoPrompt("rest-moved"), params: { temperature: 0.7 } },
    ]);
    await waitUntil(() => eventsOf("rest-moved").length === 2);
    const put = (version: number, expectedVersion?: number | null) =>
      api(server, "/api/v1/prompts/rest-moved/tags/beta", {
        method: "PUT",
        json: expectedVersion === undefined ? { version } : { version, expectedVersion },
      });
    expect((await put(1, null)).status).toBe(200);
    expect((await put(2, 1)).status).toBe(200);
    expect((await put(2)).status).toBe(200);
    await waitUntil(() => eventsOf("rest-moved").length >= 4);
    await Bun.sleep(600);
    const moves = eventsOf("rest-moved").filter((payload) => payload.type === "prompt.tag.moved");
    expect(moves.map((payload) => payload.data)).toEqual([
      { slug: "rest-moved", tag: "beta", version: 1, previousVersion: null },
      { slug: "rest-moved", tag: "beta", version: 2, previousVersion: 1 },
    ]);
    expect(named.received.every((item) => item.verified)).toBe(true);
  });

  test("CLI push, tRPC prompt.tag and CLI prompts tag → the events, signed; a redelivery sends one again", async () => {
    await pushPrompts(server, server.tenantId, [echoPrompt("cli-hooked")]);
    await pushPrompts(server, server.tenantId, [
      { ...echoPrompt("cli-hooked"), params: { temperature: 0.5 } },
    ]);
    await waitUntil(() => eventsOf("cli-hooked").length >= 2);
    expect((await trpc("prompt.tag", { slug: "cli-hooked", version: "2", tag: "production" })).status).toBe(
      200,
    );
    const tagged = await server.cli(
      "prompts",
      "tag",
      "cli-hooked",
      "1",
      "production",
      "--tenant",
      server.tenantId,
    );
    expect(tagged.code).toBe(0);
    await waitUntil(() => eventsOf("cli-hooked").length >= 4);
    const moves = eventsOf("cli-hooked").filter((payload) => payload.type === "prompt.tag.moved");
    expect(moves.map((payload) => payload.data).slice(-2)).toEqual([
      { slug: "cli-hooked", tag: "production", version: 2, previousVersion: null },
      { slug: "cli-hooked", tag: "production", version: 1, previousVersion: 2 },
    ]);
    expect(
      eventsOf("cli-hooked")
        .filter((payload) => payload.type === "prompt.version.created")
        .map((payload) => payload.data.version),
    ).toEqual([1, 2]);
    expect(named.received.every((item) => item.verified)).toBe(true);

    // The delivery log lists prompt events without a run; a redelivery sends the same webhook-id.
    const attempts = await server.cli<Array<{ deliveryId: string; runId: string | null; eventType: string }>>(
      "webhooks",
      "attempts",
      server.tenantId,
    );
    const promptAttempt = attempts.json.find((attempt) => attempt.eventType === "prompt.tag.moved");
    expect(promptAttempt?.runId).toBeNull();
    const before = named.received.length;
    const redelivered = await server.cli("webhooks", "redeliver", server.tenantId, promptAttempt!.deliveryId);
    expect(redelivered.code).toBe(0);
    await waitUntil(() => named.received.length > before);
    expect(named.received.at(-1)).toMatchObject({ id: promptAttempt!.deliveryId, verified: true });
  });

  test("webhooks that name no events, and other tenants' webhooks, never receive prompt events", async () => {
    await Bun.sleep(300);
    expect(unnamed.received).toEqual([]);
    expect(otherTenant.received).toEqual([]);
  });
});
