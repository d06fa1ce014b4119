import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { TenantRecord } from "@promptrun/core";
import { openSqliteStore, type SqliteStore } from "./open.ts";
import { addTenant, definitionOf, openTempStore } from "./test-fixtures.ts";

const at = (seconds: number) => new Date(1_700_000_000_000 + seconds * 1000);

const push = (
  store: SqliteStore,
  tenantId: string,
  slug: string,
  text: string,
  tags: string[] = [],
  second = 0,
) =>
  store.prompts.pushVersion({
    tenantId,
    slug,
    definition: definitionOf(text),
    contentHash: `hash-of-${text}`,
    tags,
    newPromptId: Bun.randomUUIDv7(),
    newVersionId: Bun.randomUUIDv7(),
    at: at(second),
  });

describe("SQLite PromptStore", () => {
  let store: SqliteStore;
  let dispose: () => Promise<void>;
  let url: string;
  let acme: TenantRecord;
  let other: TenantRecord;

  beforeEach(async () => {
    const opened = await openTempStore();
    ({ store, dispose } = opened);
    url = `file:${opened.store.path}`;
    acme = await addTenant(store, "acme");
    other = await addTenant(store, "other");
  });
  afterEach(() => dispose());

  test("pushVersion creates version 1, is idempotent for identical content, then increments", async () => {
    const first = await push(store, acme.id, "greet", "hello");
    expect(first.created).toBe(true);
    expect(first.version).toMatchObject({
      slug: "greet",
      version: 1,
      tenantId: acme.id,
      contentHash: "hash-of-hello",
    });
    expect(first.version.definition).toEqual(definitionOf("hello"));

    const same = await push(store, acme.id, "greet", "hello", [], 5);
    expect(same.created).toBe(false);
    expect(same.version).toEqual(first.version);

    const second = await push(store, acme.id, "greet", "hello again", [], 10);
    expect(second.created).toBe(true);
    expect(second.version.version).toBe(2);
    expect(second.version.promptId).toBe(first.version.promptId);

    // Going back to earlier content is a change against the newest version: version 3.
    const third = await push(store, acme.id, "greet", "hello", [], 20);
    expect(third.created).toBe(true);
    expect(third.version.version).toBe(3);

    const prompt = await store.prompts.getPrompt(acme.id, "greet");
    expect(prompt).toMatchObject({ latestVersion: 3, createdAt: at(0), updatedAt: at(20) });
  });

  test("tags follow the pushed version, identical pushes included", async () => {
    const first = await push(store, acme.id, "greet", "v1", ["production", "stable"]);
    expect(first.tags).toEqual(["production", "stable"]);

    const second = await push(store, acme.id, "greet", "v2", ["production"]);
    expect(second.tags).toEqual(["production"]);
    expect(await store.prompts.tagsOf(first.version.id)).toEqual(["stable"]);
    expect(await store.prompts.tagsOf(second.version.id)).toEqual(["production"]);

    const again = await push(store, acme.id, "greet", "v2", ["canary"]);
    expect(again.created).toBe(false);
    expect(again.tags).toEqual(["canary", "production"]);
    expect((await store.prompts.getPrompt(acme.id, "greet"))?.tags).toEqual({
      canary: 2,
      production: 2,
      stable: 1,
    });
  });

  test("resolveVersion handles id, number, latest and tag, scoped by tenant and slug", async () => {
    const v1 = (await push(store, acme.id, "greet", "v1", ["stable"])).version;
    const v2 = (await push(store, acme.id, "greet", "v2")).version;
    const farewell = (await push(store, acme.id, "farewell", "bye", ["stable"])).version;
    const foreign = (await push(store, other.id, "greet", "theirs", ["stable"])).version;
    const resolve = store.prompts.resolveVersion;

    expect(await resolve(acme.id, "greet", { kind: "id", id: v1.id })).toEqual(v1);
    expect(await resolve(acme.id, "greet", { kind: "number", version: 2 })).toEqual(v2);
    expect(await resolve(acme.id, "greet", { kind: "latest" })).toEqual(v2);
    expect(await resolve(acme.id, "greet", { kind: "tag", tag: "stable" })).toEqual(v1);

    expect(await resolve(acme.id, "greet", { kind: "number", version: 3 })).toBeNull();
    expect(await resolve(acme.id, "greet", { kind: "tag", tag: "Stable" })).toBeNull();
    expect(await resolve(acme.id, "missing", { kind: "latest" })).toBeNull();
    // An id of another prompt, or of another tenant's prompt, resolves to nothing.
    expect(await resolve(acme.id, "greet", { kind: "id", id: farewell.id })).toBeNull();
    expect(await resolve(acme.id, "greet", { kind: "id", id: foreign.id })).toBeNull();
    expect(await resolve(other.id, "greet", { kind: "id", id: v1.id })).toBeNull();
    // Same slug, other tenant: its own versions and tags.
    expect(await resolve(other.id, "greet", { kind: "latest" })).toEqual(foreign);
    expect(await resolve(other.id, "greet", { kind: "tag", tag: "stable" })).toEqual(foreign);
    expect(foreign.version).toBe(1);
  });

  test("setTag moves a tag to the selected version, or returns null", async () => {
    const v1 = (await push(store, acme.id, "greet", "v1")).version;
    await push(store, acme.id, "greet", "v2", ["production"]);
    const tagged = await store.prompts.setTag(
      acme.id,
      "greet",
      { kind: "number", version: 1 },
      "production",
      at(30),
    );
    expect(tagged).toEqual(v1);
    expect(await store.prompts.resolveVersion(acme.id, "greet", { kind: "tag", tag: "production" })).toEqual(
      v1,
    );
    expect((await store.prompts.getPrompt(acme.id, "greet"))?.updatedAt).toEqual(at(30));

    expect(
      await store.prompts.setTag(acme.id, "greet", { kind: "number", version: 9 }, "x", at(40)),
    ).toBeNull();
    expect(await store.prompts.setTag(other.id, "greet", { kind: "id", id: v1.id }, "x", at(40))).toBeNull();
    expect(await store.prompts.tagsOf(v1.id)).toEqual(["production"]);
  });

  test("getPrompt and listPrompts never show another tenant's prompts", async () => {
    await push(store, acme.id, "mine", "a");
    await push(store, other.id, "theirs", "b");
    expect(await store.prompts.getPrompt(acme.id, "theirs")).toBeNull();
    const page = await store.prompts.listPrompts(acme.id, { limit: 50 });
    expect(page.items.map((prompt) => prompt.slug)).toEqual(["mine"]);
    expect(page.nextCursor).toBeNull();
  });

  test("listPrompts pages in slug order with an opaque cursor", async () => {
    for (const slug of ["echo", "alpha", "delta", "bravo", "charlie"]) await push(store, acme.id, slug, slug);
    const slugs: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<typeof store.prompts.listPrompts>> = await store.prompts.listPrompts(
        acme.id,
        {
          cursor,
          limit: 2,
        },
      );
      slugs.push(...page.items.map((prompt) => prompt.slug));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(slugs).toEqual(["alpha", "bravo", "charlie", "delta", "echo"]);
    expect(pages).toBe(3);
  });

  test("listVersions pages newest first", async () => {
    for (const text of ["v1", "v2", "v3", "v4", "v5"]) await push(store, acme.id, "greet", text);
    const first = await store.prompts.listVersions(acme.id, "greet", { limit: 3 });
    expect(first.items.map((version) => version.version)).toEqual([5, 4, 3]);
    const second = await store.prompts.listVersions(acme.id, "greet", { cursor: first.nextCursor, limit: 3 });
    expect(second.items.map((version) => version.version)).toEqual([2, 1]);
    expect(second.nextCursor).toBeNull();
    expect((await store.prompts.listVersions(other.id, "greet", { limit: 3 })).items).toEqual([]);
  });

  test("a push for an unknown tenant is invalid and leaves nothing behind", async () => {
    await expect(push(store, Bun.randomUUIDv7(), "greet", "hello")).rejects.toMatchObject({
      code: "invalid",
    });
    expect(store.raw.query("SELECT count(*) AS n FROM prompts").get()).toEqual({ n: 0 });
  });

  test("a malformed cursor is invalid", async () => {
    await expect(
      store.prompts.listPrompts(acme.id, { cursor: "not-a-cursor", limit: 2 }),
    ).rejects.toMatchObject({
      code: "invalid",
    });
  });

  test("versions increment across two connections to the same file", async () => {
    const second = await openSqliteStore({ url });
    try {
      await push(store, acme.id, "shared", "one");
      const fromSecond = await push(second, acme.id, "shared", "two");
      const fromFirst = await push(store, acme.id, "shared", "three");
      expect([fromSecond.version.version, fromFirst.version.version]).toEqual([2, 3]);
    } finally {
      await second.close();
    }
  });

  test("remembered resolutions follow pushes and tag moves made here or by another connection", async () => {
    const resolve = store.prompts.resolveVersion;
    const v1 = (await push(store, acme.id, "greet", "v1", ["stable"])).version;
    expect(await resolve(acme.id, "greet", { kind: "latest" })).toEqual(v1);
    expect(await resolve(acme.id, "greet", { kind: "tag", tag: "stable" })).toEqual(v1);
    // One shared record per resolution: it cannot be changed by a caller.
    const shared = await resolve(acme.id, "greet", { kind: "number", version: 1 });
    expect(Object.isFrozen(shared?.definition.messages)).toBe(true);

    const v2 = (await push(store, acme.id, "greet", "v2")).version;
    expect(await resolve(acme.id, "greet", { kind: "latest" })).toEqual(v2);
    await store.prompts.setTag(acme.id, "greet", { kind: "number", version: 2 }, "stable", at(3));
    expect(await resolve(acme.id, "greet", { kind: "tag", tag: "stable" })).toEqual(v2);

    // Another connection (the CLI is another process) pushes and moves the tag back.
    const second = await openSqliteStore({ url });
    try {
      const v3 = (await push(second, acme.id, "greet", "v3")).version;
      expect(await resolve(acme.id, "greet", { kind: "latest" })).toEqual(v3);
      await second.prompts.setTag(acme.id, "greet", { kind: "number", version: 1 }, "stable", at(4));
      expect(await resolve(acme.id, "greet", { kind: "tag", tag: "stable" })).toEqual(v1);
    } finally {
      await second.close();
    }
  });
});
