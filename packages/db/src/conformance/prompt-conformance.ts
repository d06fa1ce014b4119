import { beforeEach, expect, test } from "bun:test";
import type { PromptDefinition } from "@promptrun/contract";
import type { TenantRecord } from "@promptrun/core";
import { addTenant, at, definitionOf, push } from "@promptrun/core/testing";
import type { ConformanceContext } from "./conformance-context.ts";

export const promptConformance = ({ store }: ConformanceContext): void => {
  let acme: TenantRecord;
  let other: TenantRecord;
  beforeEach(async () => {
    acme = await addTenant(store(), "acme");
    other = await addTenant(store(), "other");
  });

  test("pushVersion creates version 1, is idempotent for identical content, then increments", async () => {
    const first = await push(store(), acme.id, "greet", "hello");
    expect(first.created).toBe(true);
    expect(first.version).toMatchObject({
      slug: "greet",
      version: 1,
      tenantId: acme.id,
      contentHash: "hash-of-hello",
      createdAt: at(0),
    });
    expect(first.version.definition).toEqual(definitionOf("hello"));

    const same = await push(store(), acme.id, "greet", "hello", [], 5);
    expect(same.created).toBe(false);
    expect(same.version).toEqual(first.version);

    const second = await push(store(), acme.id, "greet", "hello again", [], 10);
    expect(second.created).toBe(true);
    expect(second.version.version).toBe(2);
    expect(second.version.promptId).toBe(first.version.promptId);

    // Going back to earlier content is a change against the newest version: version 3.
    const third = await push(store(), acme.id, "greet", "hello", [], 20);
    expect(third.created).toBe(true);
    expect(third.version.version).toBe(3);

    expect(await store().prompts.getPrompt(acme.id, "greet")).toEqual({
      id: first.version.promptId,
      tenantId: acme.id,
      slug: "greet",
      latestVersion: 3,
      description: null,
      tags: {},
      createdAt: at(0),
      updatedAt: at(20),
    });
  });

  test("countVersions counts every version of the tenant's prompts, and only theirs", async () => {
    expect(await store().prompts.countVersions(acme.id)).toBe(0);
    await push(store(), acme.id, "greet", "hello");
    await push(store(), acme.id, "greet", "hello", [], 5);
    await push(store(), acme.id, "greet", "hello again", [], 10);
    await push(store(), acme.id, "farewell", "bye", [], 15);
    await push(store(), other.id, "greet", "hello", [], 20);
    expect(await store().prompts.countVersions(acme.id)).toBe(3);
    expect(await store().prompts.countVersions(other.id)).toBe(1);
  });

  test("a definition comes back as written, key order included", async () => {
    const definition: PromptDefinition = {
      model: "dev:echo",
      params: { temperature: 0.3, maxOutputTokens: 256 },
      inputs: {
        zeta: { type: "string" },
        alpha: { type: "string", default: "friendly" },
        mid: { type: "string", optional: true },
      },
      messages: [
        { role: "system", content: "Greet in a {{alpha}} tone. ünïcødé ✓" },
        { role: "user", content: "Say hello to {{zeta}} {{mid}}." },
      ],
    };
    const pushed = await push(store(), acme.id, "ordered", "ordered", [], 0, definition);
    const resolved = await store().prompts.resolveVersion(acme.id, "ordered", { kind: "latest" });
    expect(resolved?.definition).toEqual(definition);
    expect(JSON.stringify(resolved?.definition)).toBe(JSON.stringify(definition));
    expect(pushed.version.definition).toEqual(definition);
  });

  test("tags follow the pushed version, identical pushes included", async () => {
    const first = await push(store(), acme.id, "greet", "v1", ["production", "stable"]);
    expect(first.tags).toEqual(["production", "stable"]);

    const second = await push(store(), acme.id, "greet", "v2", ["production", "production"]);
    expect(second.tags).toEqual(["production"]);
    expect(await store().prompts.tagsOf(first.version.id)).toEqual(["stable"]);
    expect(await store().prompts.tagsOf(second.version.id)).toEqual(["production"]);

    const again = await push(store(), acme.id, "greet", "v2", ["canary", "Beta"]);
    expect(again.created).toBe(false);
    // Byte order: upper case sorts before lower case.
    expect(again.tags).toEqual(["Beta", "canary", "production"]);
    expect((await store().prompts.getPrompt(acme.id, "greet"))?.tags).toEqual({
      Beta: 2,
      canary: 2,
      production: 2,
      stable: 1,
    });
  });

  test("resolveVersion handles id, number, latest and tag, scoped by tenant and slug", async () => {
    const v1 = (await push(store(), acme.id, "greet", "v1", ["stable"])).version;
    const v2 = (await push(store(), acme.id, "greet", "v2")).version;
    const farewell = (await push(store(), acme.id, "farewell", "bye", ["stable"])).version;
    const foreign = (await push(store(), other.id, "greet", "theirs", ["stable"])).version;
    const resolve = store().prompts.resolveVersion;

    expect(await resolve(acme.id, "greet", { kind: "id", id: v1.id })).toEqual(v1);
    expect(await resolve(acme.id, "greet", { kind: "number", version: 2 })).toEqual(v2);
    expect(await resolve(acme.id, "greet", { kind: "latest" })).toEqual(v2);
    expect(await resolve(acme.id, "greet", { kind: "tag", tag: "stable" })).toEqual(v1);

    expect(await resolve(acme.id, "greet", { kind: "number", version: 3 })).toBeNull();
    expect(await resolve(acme.id, "greet", { kind: "tag", tag: "Stable" })).toBeNull();
    expect(await resolve(acme.id, "missing", { kind: "latest" })).toBeNull();
    expect(await resolve(acme.id, "greet", { kind: "id", id: "not-a-uuid" })).toBeNull();
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
    const v1 = (await push(store(), acme.id, "greet", "v1")).version;
    await push(store(), acme.id, "greet", "v2", ["production"]);
    const tagged = await store().prompts.setTag(
      acme.id,
      "greet",
      { kind: "number", version: 1 },
      "production",
      at(30),
    );
    expect(tagged).toEqual(v1);
    expect(
      await store().prompts.resolveVersion(acme.id, "greet", { kind: "tag", tag: "production" }),
    ).toEqual(v1);
    expect((await store().prompts.getPrompt(acme.id, "greet"))?.updatedAt).toEqual(at(30));

    expect(
      await store().prompts.setTag(acme.id, "greet", { kind: "number", version: 9 }, "x", at(40)),
    ).toBeNull();
    expect(
      await store().prompts.setTag(other.id, "greet", { kind: "id", id: v1.id }, "x", at(40)),
    ).toBeNull();
    expect(await store().prompts.tagsOf(v1.id)).toEqual(["production"]);
    expect((await store().prompts.getPrompt(acme.id, "greet"))?.updatedAt).toEqual(at(30));
  });

  test("moveTag is a compare-and-set: one of two moves with the same guard wins", async () => {
    await push(store(), acme.id, "greet", "v1", ["production"]);
    await push(store(), acme.id, "greet", "v2");
    await push(store(), acme.id, "greet", "v3");
    const move = (version: number, expectedVersion?: number | null) =>
      store().prompts.moveTag({
        tenantId: acme.id,
        slug: "greet",
        tag: "production",
        version,
        expectedVersion,
        at: at(50),
        movedBy: "pr_a",
      });
    const outcomes = await Promise.all([move(2, 1), move(3, 1)]);
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(["conflict", "moved"]);
    const winner = outcomes.find((o) => o.outcome === "moved");
    expect(winner?.outcome === "moved" && winner.previousVersion).toBe(1);
    const now = (await store().prompts.getPrompt(acme.id, "greet"))?.tags.production;
    expect(await move(1, 1)).toEqual({ outcome: "conflict", current: now ?? null });
    expect(await move(1, null)).toEqual({ outcome: "conflict", current: now ?? null });
    expect((await move(1)).outcome).toBe("moved");
    expect(await move(9)).toEqual({ outcome: "missing" });
    const fresh = await store().prompts.moveTag({
      tenantId: acme.id,
      slug: "greet",
      tag: "beta",
      version: 2,
      expectedVersion: null,
      at: at(51),
      movedBy: "pr_a",
    });
    expect(fresh.outcome === "moved" && fresh.previousVersion).toBeNull();
    expect(
      await store().prompts.moveTag({
        tenantId: other.id,
        slug: "greet",
        tag: "beta",
        version: 1,
        at: at(52),
        movedBy: "pr_a",
      }),
    ).toEqual({ outcome: "missing" });
  });

  test("deleteTag removes a tag and returns where it pointed", async () => {
    await push(store(), acme.id, "greet", "v1", ["production"]);
    expect(await store().prompts.deleteTag(other.id, "greet", "production", at(60), "pr_a")).toBeNull();
    expect(await store().prompts.deleteTag(acme.id, "greet", "production", at(60), "pr_a")).toBe(1);
    expect(await store().prompts.deleteTag(acme.id, "greet", "production", at(61), "pr_a")).toBeNull();
    expect((await store().prompts.getPrompt(acme.id, "greet"))?.tags).toEqual({});
    expect(
      await store().prompts.resolveVersion(acme.id, "greet", { kind: "tag", tag: "production" }),
    ).toBeNull();
  });

  test("every tag move is recorded, newest first, across pages; deletes record version null", async () => {
    await push(store(), acme.id, "greet", "v1", ["production"]);
    await push(store(), acme.id, "greet", "v2");
    await push(store(), other.id, "greet", "theirs", ["production"]);
    const prompts = store().prompts;
    await prompts.setTag(acme.id, "greet", { kind: "number", version: 2 }, "production", at(70), "pr_b");
    await prompts.setTag(acme.id, "greet", { kind: "number", version: 2 }, "production", at(71), "pr_b");
    const move = {
      tenantId: acme.id,
      slug: "greet",
      tag: "production",
      version: 1,
      at: at(72),
      movedBy: "pr_c",
    };
    expect((await prompts.moveTag(move)).outcome).toBe("moved");
    expect(await prompts.deleteTag(acme.id, "greet", "production", at(73), "cli")).toBe(1);
    const first = await prompts.listTagHistory(acme.id, "greet", "production", { limit: 2 });
    expect(first.items).toEqual([
      { version: null, previousVersion: 1, movedAt: at(73), movedBy: "cli" },
      { version: 1, previousVersion: 2, movedAt: at(72), movedBy: "pr_c" },
    ]);
    const rest = await prompts.listTagHistory(acme.id, "greet", "production", {
      limit: 2,
      cursor: first.nextCursor,
    });
    expect(rest.items.map((item) => [item.version, item.previousVersion, item.movedBy])).toEqual([
      [2, 1, "pr_b"],
      [1, null, "cli"],
    ]);
    expect(rest.nextCursor).toBeNull();
    const theirs = await prompts.listTagHistory(other.id, "greet", "production", { limit: 50 });
    expect(theirs.items.map((item) => item.version)).toEqual([1]);
    expect((await prompts.listTagHistory(acme.id, "nope", "production", { limit: 50 })).items).toEqual([]);
  });

  test("getPrompt and listPrompts never show another tenant's prompts", async () => {
    await push(store(), acme.id, "mine", "a");
    await push(store(), other.id, "theirs", "b");
    expect(await store().prompts.getPrompt(acme.id, "theirs")).toBeNull();
    const page = await store().prompts.listPrompts(acme.id, { limit: 50 });
    expect(page.items.map((prompt) => prompt.slug)).toEqual(["mine"]);
    expect(page.nextCursor).toBeNull();
  });

  test("listPrompts pages in byte order of the slug with an opaque cursor", async () => {
    const slugs = ["echo", "alpha", "delta", "a-b", "bravo", "ab", "charlie", "a_b", "a.b"];
    for (const slug of slugs) await push(store(), acme.id, slug, slug, [slug === "delta" ? "live" : "draft"]);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<ReturnType<typeof store>["prompts"]["listPrompts"]>> =
        await store().prompts.listPrompts(acme.id, { cursor, limit: 2 });
      seen.push(...page.items.map((prompt) => prompt.slug));
      if (pages === 0) expect(page.items[0]?.tags).toEqual({ draft: 1 });
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual([...slugs].sort());
    expect(pages).toBe(5);
    const delta = await store().prompts.listPrompts(acme.id, { limit: 50 });
    expect(delta.items.find((prompt) => prompt.slug === "delta")?.tags).toEqual({ live: 1 });
  });

  test("a prompt's description is its latest version's, and q matches slug or description", async () => {
    const described = (text: string, description: string) => ({ ...definitionOf(text), description });
    await push(store(), acme.id, "greet", "v1", [], 0, described("v1", "Old words"));
    await push(store(), acme.id, "greet", "v2", [], 1, described("v2", "Says HELLO to 100%_of users"));
    await push(store(), acme.id, "farewell", "bye", ["live"]);
    await push(store(), acme.id, "hello-world", "hw", ["live"]);
    await push(store(), other.id, "hello-there", "ht", ["live"]);
    expect((await store().prompts.getPrompt(acme.id, "greet"))?.description).toBe(
      "Says HELLO to 100%_of users",
    );
    expect((await store().prompts.getPrompt(acme.id, "farewell"))?.description).toBeNull();
    const slugsOf = async (filter: { q?: string; tag?: string }) =>
      (await store().prompts.listPrompts(acme.id, { limit: 50, ...filter })).items.map(
        (prompt) => prompt.slug,
      );
    expect(await slugsOf({ q: "hello" })).toEqual(["greet", "hello-world"]);
    expect(await slugsOf({ q: "WORLD" })).toEqual(["hello-world"]);
    expect(await slugsOf({ q: "old words" })).toEqual([]);
    // LIKE wildcards in q match only themselves.
    expect(await slugsOf({ q: "%_of" })).toEqual(["greet"]);
    expect(await slugsOf({ q: "_" })).toEqual(["greet"]);
    expect(await slugsOf({ q: "%" })).toEqual(["greet"]);
    expect(await slugsOf({ q: "o%u" })).toEqual([]);
    expect(await slugsOf({ tag: "live" })).toEqual(["farewell", "hello-world"]);
    expect(await slugsOf({ tag: "live", q: "hello" })).toEqual(["hello-world"]);
    expect(await slugsOf({ tag: "nope" })).toEqual([]);
    const first = await store().prompts.listPrompts(acme.id, { limit: 1, tag: "live" });
    expect(first.items[0]?.description).toBeNull();
    const second = await store().prompts.listPrompts(acme.id, {
      limit: 1,
      tag: "live",
      cursor: first.nextCursor,
    });
    expect(second.items.map((prompt) => prompt.slug)).toEqual(["hello-world"]);
    expect(second.nextCursor).toBeNull();
  });

  test("listVersions pages newest first", async () => {
    for (const text of ["v1", "v2", "v3", "v4", "v5"]) await push(store(), acme.id, "greet", text);
    const first = await store().prompts.listVersions(acme.id, "greet", { limit: 3 });
    expect(first.items.map((version) => version.version)).toEqual([5, 4, 3]);
    expect(first.items[0]).toMatchObject({ slug: "greet", definition: definitionOf("v5") });
    const second = await store().prompts.listVersions(acme.id, "greet", {
      cursor: first.nextCursor,
      limit: 3,
    });
    expect(second.items.map((version) => version.version)).toEqual([2, 1]);
    expect(second.nextCursor).toBeNull();
    expect((await store().prompts.listVersions(other.id, "greet", { limit: 3 })).items).toEqual([]);
  });

  test("a push for an unknown tenant is invalid and leaves nothing behind", async () => {
    const stranger = Bun.randomUUIDv7();
    await expect(push(store(), stranger, "greet", "hello")).rejects.toMatchObject({ code: "invalid" });
    expect(await store().prompts.getPrompt(stranger, "greet")).toBeNull();
    expect((await store().prompts.listPrompts(stranger, { limit: 10 })).items).toEqual([]);
  });

  test("a malformed cursor is invalid", async () => {
    await expect(
      store().prompts.listPrompts(acme.id, { cursor: "not-a-cursor", limit: 2 }),
    ).rejects.toMatchObject({ code: "invalid" });
    await expect(
      store().prompts.listVersions(acme.id, "greet", { cursor: "bm90IGpzb24", limit: 2 }),
    ).rejects.toMatchObject({ code: "invalid" });
  });

  test("concurrent pushes of one slug get distinct, gapless versions", async () => {
    const texts = Array.from({ length: 12 }, (_, index) => `text-${index}`);
    const results = await Promise.all(texts.map((text) => push(store(), acme.id, "busy", text, ["latest"])));
    expect(results.every((result) => result.created)).toBe(true);
    expect(results.map((result) => result.version.version).sort((a, b) => a - b)).toEqual(
      texts.map((_, index) => index + 1),
    );
    const promptIds = new Set(results.map((result) => result.version.promptId));
    expect(promptIds.size).toBe(1);
    const prompt = await store().prompts.getPrompt(acme.id, "busy");
    expect(prompt?.latestVersion).toBe(12);
    // The tag ends on the version committed last, which is the newest.
    expect(prompt?.tags).toEqual({ latest: 12 });

    const identical = await Promise.all(
      Array.from({ length: 6 }, () => push(store(), acme.id, "same", "one text")),
    );
    expect(identical.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(identical.map((result) => result.version.id)).size).toBe(1);
    expect((await store().prompts.getPrompt(acme.id, "same"))?.latestVersion).toBe(1);
  });
};
