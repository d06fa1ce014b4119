import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { PromptFileInput, StreamEvent, ThreadEvent } from "@promptrun/contract";
import type { PromptrunServices } from "@promptrun/core";
import { waitFor } from "@promptrun/core/testing";
import {
  createTRPCClient,
  httpBatchLink,
  httpSubscriptionLink,
  splitLink,
  TRPCClientError,
} from "@trpc/client";
import { EventSource } from "eventsource";
import {
  ADMIN_TOKEN,
  type ApiTestKit,
  createApiTestKit,
  type TestTenant,
} from "../sse/testing/api-test-kit.ts";
import type { AppRouter } from "./index.ts";

const greet = {
  slug: "greet",
  model: "dev:echo",
  inputs: { name: { type: "string" } },
  messages: [{ role: "user", content: "Say hello to {{name}}." }],
  tags: ["production"],
} satisfies PromptFileInput;

type Headers = Record<string, string>;

type LinkFetch = NonNullable<Parameters<typeof httpBatchLink>[0]["fetch"]>;

/** fetch() answered by the tRPC handler itself (Bun's Response type differs from tRPC's structural one). */
const inProcessFetch = (kit: ApiTestKit): LinkFetch =>
  ((url: string | URL, init?: RequestInit) =>
    kit.trpc(new Request(String(url), init))) as unknown as LinkFetch;

/** A typed client calling the handler in-process (no socket). */
function inProcessClient(kit: ApiTestKit, headers: Headers = {}) {
  return createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: "http://local/trpc",
        headers,
        fetch: inProcessFetch(kit),
      }),
    ],
  });
}

/** A typed client over the real server: batching for queries, SSE (EventSource ponyfill) for subscriptions. */
function socketClient(kit: ApiTestKit, headers: Headers = {}) {
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (operation) => operation.type === "subscription",
        true: httpSubscriptionLink({ url: `${kit.url}/trpc`, EventSource }),
        false: httpBatchLink({ url: `${kit.url}/trpc`, headers }),
      }),
    ],
  });
}

const bearer = (tenant: TestTenant): Headers => ({ authorization: `Bearer ${tenant.apiKey}` });

async function rejectionOf(promise: Promise<unknown>): Promise<TRPCClientError<AppRouter>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TRPCClientError) return error as TRPCClientError<AppRouter>;
    throw error;
  }
  throw new Error("expected the call to fail");
}

async function expectError(promise: Promise<unknown>, code: string, message?: string | RegExp) {
  const error = await rejectionOf(promise);
  expect(error.data?.code).toBe(code as never);
  if (message !== undefined) expect(error.message).toMatch(message);
  expect(JSON.stringify(error.shape)).not.toContain("stack");
  return error;
}

describe("tRPC procedures (in-process)", () => {
  let kit: ApiTestKit;
  let clientA: ReturnType<typeof inProcessClient>;
  let clientB: ReturnType<typeof inProcessClient>;
  beforeEach(async () => {
    kit = await createApiTestKit();
    clientA = inProcessClient(kit, bearer(kit.tenantA));
    clientB = inProcessClient(kit, bearer(kit.tenantB));
  });
  afterEach(() => kit.close());

  test("prompt.list filters by q and tag, prompt.summary and the version's contentHash", async () => {
    await clientA.prompt.push.mutate({
      files: [
        { ...greet, description: "Greets a USER" },
        { ...greet, slug: "farewell", tags: [] },
      ],
    });
    await clientB.prompt.push.mutate({ files: [{ ...greet, slug: "greet-b" }] });
    const slugs = async (input: { q?: string; tag?: string }) =>
      (await clientA.prompt.list.query(input)).items.map((prompt) => prompt.slug);
    expect(await slugs({ q: "user" })).toEqual(["greet"]);
    expect(await slugs({ q: "FARE" })).toEqual(["farewell"]);
    expect(await slugs({ tag: "production" })).toEqual(["greet"]);
    expect(await slugs({ q: "greet" })).toEqual(["greet"]);
    const summary = await clientA.prompt.summary.query({ slug: "greet" });
    expect(summary).toMatchObject({ slug: "greet", description: "Greets a USER", latestVersion: 1 });
    expect(summary.tags).toEqual({ production: 1 });
    await expectError(clientA.prompt.summary.query({ slug: "greet-b" }), "NOT_FOUND");
    const version = await clientA.prompt.get.query({ slug: "greet" });
    expect(version.contentHash).toMatch(/^[0-9a-f]{64}$/);
  });

  test("prompt.push, list, get, versions and tag", async () => {
    const [pushed] = await clientA.prompt.push.mutate({ files: [greet] });
    expect(pushed).toMatchObject({ slug: "greet", version: 1, created: true, tags: ["production"] });
    const [again] = await clientA.prompt.push.mutate({ files: [greet] });
    expect(again).toMatchObject({ version: 1, created: false });
    const changed = { ...greet, messages: [{ role: "user" as const, content: "Hi {{name}}!" }] };
    expect((await clientA.prompt.push.mutate({ files: [changed] }))[0]?.version).toBe(2);

    const list = await clientA.prompt.list.query({});
    expect(list.items.map((prompt) => [prompt.slug, prompt.latestVersion])).toEqual([["greet", 2]]);
    expect((await clientA.prompt.get.query({ slug: "greet" })).version).toBe(2);
    expect((await clientA.prompt.get.query({ slug: "greet", version: "1" })).messages[0]?.content).toBe(
      "Say hello to {{name}}.",
    );
    const versions = await clientA.prompt.versions.query({ slug: "greet", limit: 1 });
    expect(versions.items).toHaveLength(1);
    expect(versions.nextCursor).not.toBeNull();
    const rest = await clientA.prompt.versions.query({
      slug: "greet",
      limit: 1,
      cursor: versions.nextCursor,
    });
    expect([versions.items[0]?.version, rest.items[0]?.version].sort()).toEqual([1, 2]);

    expect((await clientA.prompt.tag.mutate({ slug: "greet", version: "1", tag: "stable" })).version).toBe(1);
    expect((await clientA.prompt.get.query({ slug: "greet", version: "stable" })).version).toBe(1);
    const guarded = await clientA.prompt.tag.mutate({
      slug: "greet",
      version: "2",
      tag: "stable",
      expectedVersion: 1,
    });
    expect(guarded).toMatchObject({ version: 2, created: false });
    expect(guarded.tags).toContain("stable");
    await expectError(
      clientA.prompt.tag.mutate({ slug: "greet", version: "1", tag: "stable", expectedVersion: 1 }),
      "CONFLICT",
      /points at version 2/,
    );
    await expectError(
      clientA.prompt.tag.mutate({ slug: "greet", version: "1", tag: "stable", expectedVersion: null }),
      "CONFLICT",
    );
    expect(await clientA.prompt.untag.mutate({ slug: "greet", tag: "stable" })).toEqual({
      slug: "greet",
      tag: "stable",
      previousVersion: 2,
    });
    await expectError(clientA.prompt.untag.mutate({ slug: "greet", tag: "stable" }), "NOT_FOUND");

    await expectError(clientA.prompt.get.query({ slug: "nope" }), "NOT_FOUND", /nope/);
    await expectError(clientA.prompt.get.query({ slug: "greet", version: "missing-tag" }), "NOT_FOUND");
    await expectError(
      clientA.prompt.push.mutate({
        files: [{ ...greet, messages: [{ role: "user", content: "{{undeclared}}" }] }],
      }),
      "BAD_REQUEST",
      /undeclared/,
    );
  });

  test("run.create, get, list (filters and cursor) and cancel", async () => {
    await clientA.prompt.push.mutate({ files: [greet] });
    const thread = crypto.randomUUID();
    const first = await clientA.run.create.mutate({
      slug: "greet",
      version: "latest",
      inputs: { name: "Ada" },
      thread,
    });
    expect(first.thread).toBe(thread);
    const second = await clientA.run.create.mutate({
      slug: "greet",
      version: "production",
      inputs: { name: "Bob" },
      thread,
      channel: "side",
      metadata: { source: "test" },
    });
    const elsewhere = await clientA.run.create.mutate({
      slug: "greet",
      version: "1",
      inputs: { name: "Cy" },
    });
    expect(elsewhere.thread).not.toBe(thread);

    const run = await clientA.run.get.query({ id: second.id });
    expect(run).toMatchObject({
      id: second.id,
      status: "pending",
      thread,
      channel: "side",
      metadata: { source: "test" },
      prompt: { slug: "greet", version: 1 },
      output: null,
      cost: null,
    });

    const inThread = await clientA.run.list.query({ thread });
    expect(inThread.items.map((item) => item.id).sort()).toEqual([first.id, second.id].sort());
    expect((await clientA.run.list.query({ thread, channel: "side" })).items.map((item) => item.id)).toEqual([
      second.id,
    ]);
    const page1 = await clientA.run.list.query({ limit: 2 });
    expect(page1.items).toHaveLength(2);
    const page2 = await clientA.run.list.query({ limit: 2, cursor: page1.nextCursor });
    expect(page2.items).toHaveLength(1);
    expect(new Set([...page1.items, ...page2.items].map((item) => item.id)).size).toBe(3);
    expect((await clientA.run.list.query({ status: "completed" })).items).toEqual([]);

    const cancelled = await clientA.run.cancel.mutate({ id: first.id });
    expect(cancelled).toMatchObject({ id: first.id, status: "failed", error: "cancelled" });
    expect((await clientA.run.list.query({ status: "failed" })).items.map((item) => item.id)).toEqual([
      first.id,
    ]);
    await expectError(clientA.run.cancel.mutate({ id: first.id }), "CONFLICT");
  });

  test("run.list takes the REST filters; usage.get reports ended runs; both per tenant", async () => {
    await clientA.prompt.push.mutate({ files: [greet] });
    const tagged = await clientA.run.create.mutate({
      slug: "greet",
      version: "latest",
      inputs: { name: "Ada" },
      metadata: { tags: ["vip", "eu"] },
    });
    const plain = await clientA.run.create.mutate({
      slug: "greet",
      version: "latest",
      inputs: { name: "Bob" },
    });
    const ids = async (filter: Parameters<typeof clientA.run.list.query>[0]) =>
      (await clientA.run.list.query(filter)).items.map((item) => item.id);
    expect(await ids({ metadata: { tags: "eu" } })).toEqual([tagged.id]);
    expect(await ids({ prompt: "greet", version: 1, phase: "queued" })).toEqual([plain.id, tagged.id]);
    expect(await ids({ slug: "greet", environment: "staging" })).toEqual([]);
    expect(await ids({ createdAfter: "2000-01-01T00:00:00Z", phase: "requires_action" })).toEqual([]);
    await expectError(clientA.run.list.query({ version: 1 }), "BAD_REQUEST");

    expect(await clientA.usage.get.query({})).toEqual({ items: [] });
    await clientA.run.cancel.mutate({ id: plain.id });
    const usage = await clientA.usage.get.query({ groupBy: "prompt" });
    expect(usage.items).toMatchObject([{ key: "greet", runs: 1, completed: 0, failed: 1 }]);
    expect((await clientB.usage.get.query({ groupBy: "prompt" })).items).toEqual([]);
    expect((await clientB.run.list.query({ metadata: { tags: "eu" } })).items).toEqual([]);
    await expectError(clientA.usage.get.query({ from: "2025-01-01", to: "2026-06-01" }), "BAD_REQUEST");
  });

  test("run.create reports the same errors as REST, mapped to tRPC codes", async () => {
    await clientA.prompt.push.mutate({ files: [greet] });
    const create = (input: Parameters<typeof clientA.run.create.mutate>[0], client = clientA) =>
      client.run.create.mutate(input);
    await expectError(create({ slug: "missing", version: "latest", inputs: {} }), "NOT_FOUND", /missing/);
    await expectError(create({ slug: "greet", version: "7", inputs: { name: "x" } }), "NOT_FOUND");
    const missingInput = await expectError(
      create({ slug: "greet", version: "latest", inputs: {} }),
      "BAD_REQUEST",
    );
    expect(missingInput.message).toContain("name");
    expect(missingInput.data?.httpStatus).toBe(400);
    await expectError(
      create({ slug: "greet", version: "latest", inputs: { name: 5 } }),
      "BAD_REQUEST",
      /name/,
    );
    await expectError(
      create({ slug: "greet", version: "latest", inputs: { name: "x" }, environment: "staging" }),
      "BAD_REQUEST",
      /environment/,
    );
    await expectError(
      create({ slug: "greet", version: "latest", inputs: { name: "x" }, envVars: { lower: "x" } }),
      "BAD_REQUEST",
      /UPPER_CASE/,
    );
    const unknownField = await expectError(
      clientA.run.create.mutate({ slug: "greet", version: "latest", inputs: {}, extra: true } as never),
      "BAD_REQUEST",
    );
    expect(unknownField.message).toContain("extra");
    expect(unknownField.data?.errorCode).toBe("invalid");

    await expectError(
      create({ slug: "greet", version: "latest", inputs: { name: "x" } }, inProcessClient(kit)),
      "UNAUTHORIZED",
    );
    await expectError(
      create(
        { slug: "greet", version: "latest", inputs: { name: "x" } },
        inProcessClient(kit, { authorization: "Bearer pr_live_nope" }),
      ),
      "UNAUTHORIZED",
      /invalid API key/,
    );

    const admin = inProcessClient(kit, { "x-promptrun-admin-token": ADMIN_TOKEN });
    const run = await create({ slug: "greet", version: "latest", inputs: { name: "x" } });
    await admin.admin.tenant.setSubscription.mutate({ tenantId: kit.tenantA.id, active: false });
    const forbidden = await expectError(
      create({ slug: "greet", version: "latest", inputs: { name: "x" } }),
      "FORBIDDEN",
    );
    expect(forbidden.data?.httpStatus).toBe(403);
    // Reading stays allowed without an active subscription.
    expect((await clientA.run.get.query({ id: run.id })).id).toBe(run.id);
  });

  test("prompt.render: the REST render over the same service; a read, no subscription needed", async () => {
    await clientA.prompt.push.mutate({ files: [greet] });
    const rendered = await clientA.prompt.render.mutate({
      slug: "greet",
      version: "1",
      inputs: { name: "Ada" },
    });
    expect(rendered).toEqual({
      model: "dev:echo",
      params: {},
      messages: [{ role: "user", content: "Say hello to Ada." }],
      tools: [],
      output: null,
      providerOptions: null,
      memory: { messages: 0, dropped: 0 },
    });
    await expectError(
      clientA.prompt.render.mutate({ slug: "greet", version: "latest", inputs: {} }),
      "BAD_REQUEST",
      /missing required input: inputs.name/,
    );
    await expectError(
      clientB.prompt.render.mutate({ slug: "greet", version: "latest", inputs: { name: "x" } }),
      "NOT_FOUND",
    );
    await expectError(
      inProcessClient(kit).prompt.render.mutate({ slug: "greet", version: "latest", inputs: { name: "x" } }),
      "UNAUTHORIZED",
    );
    const admin = inProcessClient(kit, { "x-promptrun-admin-token": ADMIN_TOKEN });
    await admin.admin.tenant.setSubscription.mutate({ tenantId: kit.tenantA.id, active: false });
    const inactive = await clientA.prompt.render.mutate({
      slug: "greet",
      version: "latest",
      inputs: { name: "x" },
    });
    expect(inactive.messages).toEqual([{ role: "user", content: "Say hello to x." }]);
  });

  test("tenants are isolated: another tenant's resources read as not found", async () => {
    await clientA.prompt.push.mutate({ files: [greet] });
    const run = await clientA.run.create.mutate({
      slug: "greet",
      version: "latest",
      inputs: { name: "Ada" },
    });
    await expectError(clientB.run.get.query({ id: run.id }), "NOT_FOUND");
    await expectError(clientB.run.cancel.mutate({ id: run.id }), "NOT_FOUND");
    await expectError(clientB.thread.get.query({ id: run.thread }), "NOT_FOUND");
    await expectError(clientB.prompt.get.query({ slug: "greet" }), "NOT_FOUND");
    await expectError(
      clientB.run.create.mutate({ slug: "greet", version: "latest", inputs: { name: "x" } }),
      "NOT_FOUND",
    );
    expect((await clientB.prompt.list.query({})).items).toEqual([]);
    expect((await clientB.run.list.query({})).items).toEqual([]);
    expect((await clientA.thread.get.query({ id: run.thread })).id).toBe(run.thread);
  });

  test("thread.import and thread.messages: once per externalId, tenant-scoped, import needs a subscription", async () => {
    const thread = crypto.randomUUID();
    const messages = [
      { role: "user" as const, content: "hi", externalId: "a" },
      { role: "assistant" as const, content: "hello", externalId: "b" },
    ];
    expect(await clientA.thread.import.mutate({ thread, messages })).toEqual({ imported: 2, skipped: 0 });
    expect(await clientA.thread.import.mutate({ thread, messages })).toEqual({ imported: 0, skipped: 2 });
    const page = await clientA.thread.messages.query({ thread, limit: 1 });
    expect(page.items.map((message) => [message.runId, message.content])).toEqual([[null, "hi"]]);
    const rest = await clientA.thread.messages.query({ thread, cursor: page.nextCursor });
    expect(rest).toMatchObject({ items: [{ content: "hello", externalId: "b" }], nextCursor: null });
    expect(await clientB.thread.messages.query({ thread })).toEqual({ items: [], nextCursor: null });
    await expectError(
      clientA.thread.import.mutate({ thread, messages: [{ role: "system" as never, content: "x" }] }),
      "BAD_REQUEST",
    );
    const admin = inProcessClient(kit, { "x-promptrun-admin-token": ADMIN_TOKEN });
    await admin.admin.tenant.setSubscription.mutate({ tenantId: kit.tenantA.id, active: false });
    await expectError(clientA.thread.import.mutate({ thread, messages }), "FORBIDDEN");
    expect((await clientA.thread.messages.query({ thread })).items).toHaveLength(2);
  });

  test("a stream token reads the runs of its own thread and nothing else", async () => {
    await clientA.prompt.push.mutate({ files: [greet] });
    const thread = crypto.randomUUID();
    const { token, url, expiresAt } = await clientA.thread.streamToken.mutate({ thread });
    expect(url).toEndWith(`/stream/${thread}`);
    expect(Date.parse(expiresAt)).toBeGreaterThan(kit.clock.now().getTime());
    const inThread = await clientA.run.create.mutate({
      slug: "greet",
      version: "latest",
      inputs: { name: "A" },
      thread,
    });
    const outside = await clientA.run.create.mutate({
      slug: "greet",
      version: "latest",
      inputs: { name: "B" },
    });

    const browser = inProcessClient(kit, { authorization: `Bearer ${token}` });
    expect((await browser.run.get.query({ id: inThread.id })).id).toBe(inThread.id);
    await expectError(browser.run.get.query({ id: outside.id }), "NOT_FOUND");
    await expectError(browser.run.list.query({}), "UNAUTHORIZED", /stream token/);
    await expectError(browser.prompt.list.query({}), "UNAUTHORIZED");
    await expectError(browser.thread.streamToken.mutate({ thread }), "UNAUTHORIZED");

    // Tenant B's token for the same thread id sees none of tenant A's runs.
    const tokenB = (await clientB.thread.streamToken.mutate({ thread })).token;
    await expectError(
      inProcessClient(kit, { authorization: `Bearer ${tokenB}` }).run.get.query({ id: inThread.id }),
      "NOT_FOUND",
    );

    kit.clock.advance(301_000);
    await expectError(browser.run.get.query({ id: inThread.id }), "UNAUTHORIZED", /expired/);
    await expectError(
      inProcessClient(kit, { authorization: `Bearer ${token.slice(0, -4)}AAAA` }).run.get.query({
        id: inThread.id,
      }),
      "UNAUTHORIZED",
    );
  });

  test("environment.list, set and unset", async () => {
    const initial = await clientA.environment.list.query();
    expect(initial.map((environment) => environment.name)).toContain("production");
    const staging = await clientA.environment.set.mutate({
      environment: "staging",
      values: { API_TOKEN: "s3cret", B: "2" },
    });
    expect(staging.envVarKeys.sort()).toEqual(["API_TOKEN", "B"]);
    expect(JSON.stringify(await clientA.environment.list.query())).not.toContain("s3cret");
    expect(
      (await clientA.environment.unset.mutate({ environment: "staging", keys: ["B"] })).envVarKeys,
    ).toEqual(["API_TOKEN"]);
    await expectError(
      clientA.environment.set.mutate({ environment: "staging", values: { lower: "x" } }),
      "BAD_REQUEST",
    );
    expect((await clientB.environment.list.query()).map((environment) => environment.name)).not.toContain(
      "staging",
    );
  });

  test("webhook.create, list, setEnabled, attempts, redeliver and delete", async () => {
    const { webhook, secret } = await clientA.webhook.create.mutate({
      environment: "production",
      url: "http://127.0.0.1:9/hook",
    });
    expect(secret).toStartWith("whsec_");
    expect(webhook.events.sort()).toEqual(["run.completed", "run.failed"]);
    expect((await clientA.webhook.list.query()).map((item) => item.id)).toEqual([webhook.id]);
    expect(await clientB.webhook.list.query()).toEqual([]);
    expect((await clientA.webhook.setEnabled.mutate({ id: webhook.id, enabled: false })).enabled).toBe(false);
    expect(await clientA.webhook.attempts.query({ webhookId: webhook.id })).toEqual([]);
    await expectError(clientA.webhook.redeliver.mutate({ deliveryId: crypto.randomUUID() }), "NOT_FOUND");
    await expectError(clientB.webhook.delete.mutate({ id: webhook.id }), "NOT_FOUND");
    expect(await clientA.webhook.delete.mutate({ id: webhook.id })).toEqual({ deleted: true });
    expect(await clientA.webhook.list.query()).toEqual([]);
    await expectError(
      clientA.webhook.create.mutate({ environment: "production", url: "ftp://x" }),
      "BAD_REQUEST",
    );
  });

  test("key.list, create and revoke act on the caller's own keys only", async () => {
    const created = await clientA.key.create.mutate();
    expect(created.apiKey).toStartWith("pr_live_");
    const keysA = await clientA.key.list.query();
    expect(keysA.map((key) => key.id)).toContain(created.key.id);
    expect(JSON.stringify(keysA)).not.toContain(created.apiKey);
    const keysB = await clientB.key.list.query();
    await expectError(clientA.key.revoke.mutate({ id: keysB[0]!.id }), "NOT_FOUND");
    expect(await clientA.key.revoke.mutate({ id: created.key.id })).toEqual({ revoked: 1 });
    await expectError(
      inProcessClient(kit, { authorization: `Bearer ${created.apiKey}` }).prompt.list.query({}),
      "UNAUTHORIZED",
      // As on the real stores: a revoked key is never found, so it reads as unknown.
      /invalid API key/,
    );
    // Tenant B's key still works.
    expect((await clientB.key.list.query()).every((key) => key.revokedAt === null)).toBe(true);
  });

  test("key.revoke revokes by id: a key of another tenant with the same display prefix is neither an obstacle nor touched", async () => {
    const created = await clientA.key.create.mutate();
    const [keyOfB] = await kit.store.tenants.listApiKeys(kit.tenantB.id);
    // The display prefix is 8 random characters: shared by chance across tenants, it used to make
    // the revoke ambiguous (nothing revoked, `revoked: 0`).
    await kit.store.tenants.createApiKey({
      id: crypto.randomUUID(),
      tenantId: kit.tenantB.id,
      prefix: created.key.prefix,
      hash: "f".repeat(64),
      createdAt: new Date(),
      revokedAt: null,
      lastUsedAt: null,
    });
    expect(await clientA.key.revoke.mutate({ id: created.key.id })).toEqual({ revoked: 1 });
    const revoked = (await clientA.key.list.query()).find((key) => key.id === created.key.id);
    expect(revoked?.revokedAt).not.toBeNull();
    expect((await kit.store.tenants.listApiKeys(kit.tenantB.id)).every((key) => key.revokedAt === null)).toBe(
      true,
    );
    expect(keyOfB).toBeDefined();
    // Revoked already: not found, as another tenant's id is.
    await expectError(clientA.key.revoke.mutate({ id: created.key.id }), "NOT_FOUND");
  });

  test("admin procedures need the operator token", async () => {
    await expectError(clientA.admin.tenant.list.query(), "UNAUTHORIZED", /admin/);
    await expectError(
      inProcessClient(kit, { "x-promptrun-admin-token": "wrong" }).admin.tenant.list.query(),
      "UNAUTHORIZED",
    );
    const admin = inProcessClient(kit, { "x-promptrun-admin-token": ADMIN_TOKEN });
    const { tenant, apiKey } = await admin.admin.tenant.create.mutate({ name: "Initech", active: false });
    expect((await admin.admin.tenant.list.query()).map((item) => item.name).sort()).toEqual(
      ["Initech", "tenant-a", "tenant-b"].sort(),
    );
    const initech = inProcessClient(kit, { authorization: `Bearer ${apiKey}` });
    await expectError(
      initech.thread.streamToken.mutate({ thread: crypto.randomUUID() }),
      "FORBIDDEN",
      /subscription/,
    );
    expect(
      (await admin.admin.tenant.setSubscription.mutate({ tenantId: tenant.id, active: true }))
        .subscriptionActive,
    ).toBe(true);
    expect((await initech.thread.streamToken.mutate({ thread: crypto.randomUUID() })).token).toBeString();
    const extra = await admin.admin.key.create.mutate({ tenantId: tenant.id });
    expect(await admin.admin.key.revoke.mutate({ key: extra.apiKey })).toEqual({ revoked: 1 });
    await expectError(admin.admin.key.create.mutate({ tenantId: crypto.randomUUID() }), "NOT_FOUND");
  });

  test("HTTP statuses follow the error kind; rate limits carry Retry-After", async () => {
    const post = (path: string, body: unknown, headers: Headers = bearer(kit.tenantA)) =>
      kit.trpc(
        new Request(`http://local/trpc/${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify(body),
        }),
      );
    expect((await post("prompt.tag", { slug: "nope", version: "1", tag: "x" })).status).toBe(404);
    expect((await post("prompt.tag", { slug: "NOPE" })).status).toBe(400);
    expect((await post("prompt.tag", { slug: "nope", version: "1", tag: "x" }, {})).status).toBe(401);
    const unknownProcedure = await post("prompt.explode", {});
    expect(unknownProcedure.status).toBe(404);
    expect(await unknownProcedure.text()).not.toContain("at ");

    const limited = await createApiTestKit({ engine: { rateLimit: { perSecond: 0.01, burst: 1 } } });
    try {
      const mint = () =>
        limited.trpc(
          new Request("http://local/trpc/thread.streamToken", {
            method: "POST",
            headers: { "content-type": "application/json", ...bearer(limited.tenantA) },
            body: JSON.stringify({ thread: crypto.randomUUID() }),
          }),
        );
      expect((await mint()).status).toBe(200);
      const refused = await mint();
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    } finally {
      await limited.close();
    }
  });
});

describe("unexpected errors", () => {
  test("become INTERNAL_SERVER_ERROR with a generic message, and are logged", async () => {
    const kit = await createApiTestKit({
      wrapServices: (services): PromptrunServices => ({
        ...services,
        prompts: {
          ...services.prompts,
          list: () => Promise.reject(new Error("database password is hunter2")),
        },
      }),
    });
    try {
      const error = await expectError(
        inProcessClient(kit, bearer(kit.tenantA)).prompt.list.query({}),
        "INTERNAL_SERVER_ERROR",
        "internal server error",
      );
      expect(error.data?.httpStatus).toBe(500);
      expect(JSON.stringify(error.shape)).not.toContain("hunter2");
      const logged = kit.logs.find((entry) => entry.level === "error");
      expect(JSON.stringify(logged)).toContain("hunter2");
      expect(logged?.object.path).toBe("prompt.list");
    } finally {
      await kit.close();
    }
  });
});

describe("tRPC over a socket", () => {
  let kit: ApiTestKit;
  beforeEach(async () => {
    kit = await createApiTestKit({ api: { pingIntervalMs: 1_000 } });
  });
  afterEach(() => kit.close());

  const tokenEvent = (runId: string, index: number): ThreadEvent => ({
    type: "run.token",
    data: { runId, channel: "default", index, delta: `w${index} ` },
  });

  /** Subscribes to thread.onEvents and records everything the client sees. */
  function subscribe(
    client: ReturnType<typeof socketClient>,
    input: { thread: string; token: string; lastEventId?: string },
  ) {
    const received: Array<{ id: string; data: StreamEvent }> = [];
    const state: { error: TRPCClientError<AppRouter> | null; completed: boolean } = {
      error: null,
      completed: false,
    };
    const subscription = client.thread.onEvents.subscribe(input, {
      onData: (message) => {
        received.push(message);
      },
      onError: (error) => {
        state.error = error;
      },
      onComplete: () => {
        state.completed = true;
      },
    });
    return { received, state, unsubscribe: () => subscription.unsubscribe() };
  }

  test("queries and mutations over HTTP with a typed client", async () => {
    const client = socketClient(kit, bearer(kit.tenantA));
    const [pushed, list] = await Promise.all([
      client.prompt.push.mutate({ files: [greet] }),
      client.environment.list.query(),
    ]);
    expect(pushed[0]?.slug).toBe("greet");
    expect(list.map((environment) => environment.name)).toContain("production");
    await expectError(client.prompt.get.query({ slug: "ghost" }), "NOT_FOUND");
    await expectError(socketClient(kit).prompt.list.query({}), "UNAUTHORIZED");
  });

  test("thread.onEvents streams ready and tracked run events, and lets go on unsubscribe", async () => {
    const client = socketClient(kit, bearer(kit.tenantA));
    const thread = crypto.randomUUID();
    const { token } = await client.thread.streamToken.mutate({ thread });
    const subscriber = subscribe(client, { thread, token });
    await waitFor(() => subscriber.received.length === 1, "ready");
    expect(subscriber.received[0]?.data).toEqual({ type: "ready", data: { thread } });
    // Every event is tracked: an untracked ready would give a reconnect no position.
    expect(subscriber.received[0]?.id).toMatch(/^\d+$/);
    expect(kit.bus.activeSubscriptions()).toBe(1);

    const runId = crypto.randomUUID();
    for (let index = 0; index < 3; index++)
      kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(runId, index));
    kit.services.events.publish(kit.tenantB.id, thread, tokenEvent(runId, 99));
    await waitFor(() => subscriber.received.length === 4, "three events");
    const events = subscriber.received.slice(1);
    expect(events.map((message) => message.data)).toEqual([0, 1, 2].map((index) => tokenEvent(runId, index)));
    expect(events.every((message) => /^\d+$/.test(message.id))).toBe(true);

    subscriber.unsubscribe();
    await waitFor(() => kit.bus.activeSubscriptions() === 0, "the bus subscription to end");
    expect(kit.trpc.openSubscriptions()).toBe(0);
    expect(kit.metrics.closed).toBe(kit.metrics.opened);
  });

  test("thread.onEvents resumes after lastEventId, and refuses bad tokens", async () => {
    const client = socketClient(kit, bearer(kit.tenantA));
    const thread = crypto.randomUUID();
    const { token } = await client.thread.streamToken.mutate({ thread });
    const runId = crypto.randomUUID();
    const first = subscribe(client, { thread, token });
    await waitFor(() => first.received.length === 1, "ready");
    for (let index = 0; index < 3; index++)
      kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(runId, index));
    await waitFor(() => first.received.length === 4, "events");
    first.unsubscribe();

    const resumed = subscribe(client, { thread, token, lastEventId: first.received[1]!.id });
    await waitFor(() => resumed.received.length === 3, "the replay");
    expect(resumed.received.map((message) => message.data.type)).toEqual(["ready", "run.token", "run.token"]);
    expect(resumed.received.slice(1).map((message) => message.id)).toEqual(
      first.received.slice(2).map((message) => message.id),
    );
    resumed.unsubscribe();

    const forged = subscribe(client, { thread, token: `${token.slice(0, -4)}AAAA` });
    await waitFor(() => forged.state.error !== null, "the forged token to be refused");
    expect(forged.state.error?.data?.code).toBe("UNAUTHORIZED");
    forged.unsubscribe();
    const otherThread = subscribe(client, { thread: crypto.randomUUID(), token });
    await waitFor(() => otherThread.state.error !== null, "the other thread to be refused");
    expect(otherThread.state.error?.data?.code).toBe("FORBIDDEN");
    otherThread.unsubscribe();
    await waitFor(() => kit.bus.activeSubscriptions() === 0, "no subscriptions left");
  });

  test("closeAllSubscriptions ends each subscription with `end` {reason: shutdown}", async () => {
    const client = socketClient(kit, bearer(kit.tenantA));
    const thread = crypto.randomUUID();
    const { token } = await client.thread.streamToken.mutate({ thread });
    const subscriber = subscribe(client, { thread, token });
    await waitFor(() => subscriber.received.length === 1, "ready");
    expect(kit.trpc.closeAllSubscriptions()).toBe(1);
    await waitFor(() => subscriber.state.completed, "the subscription to complete");
    expect(subscriber.received.at(-1)).toEqual({
      id: subscriber.received[0]!.id,
      data: { type: "end", data: { reason: "shutdown" } },
    });
    await waitFor(() => kit.bus.activeSubscriptions() === 0, "the bus subscription to end");
  });

  test("thread.onEvents resumes from the id of `ready` when nothing else was seen", async () => {
    const client = socketClient(kit, bearer(kit.tenantA));
    const thread = crypto.randomUUID();
    const { token } = await client.thread.streamToken.mutate({ thread });
    const runId = crypto.randomUUID();
    kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(runId, 0));
    const first = subscribe(client, { thread, token });
    await waitFor(() => first.received.length === 1, "ready");
    first.unsubscribe();
    kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(runId, 1));

    const resumed = subscribe(client, { thread, token, lastEventId: first.received[0]!.id });
    await waitFor(() => resumed.received.length === 2, "the replay");
    expect(resumed.received.map((message) => message.data)).toEqual([
      { type: "ready", data: { thread } },
      tokenEvent(runId, 1),
    ]);
    resumed.unsubscribe();
  });

  test("thread.onEvents ends with token_expired when the token runs out", async () => {
    const client = socketClient(kit, bearer(kit.tenantA));
    const thread = crypto.randomUUID();
    const { token } = await client.thread.streamToken.mutate({ thread });
    const subscriber = subscribe(client, { thread, token });
    await waitFor(() => subscriber.received.length === 1, "ready");
    kit.clock.advance(301_000);
    await waitFor(() => subscriber.state.completed, "the subscription to complete");
    expect(subscriber.received.at(-1)?.data).toEqual({ type: "end", data: { reason: "token_expired" } });
  });
});
