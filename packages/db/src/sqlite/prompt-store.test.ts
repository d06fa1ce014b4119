import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { TenantRecord } from "@promptrun/core";
import { addTenant, push } from "@promptrun/core/testing";
import { openSqliteStore, type SqliteStore } from "./open.ts";
import { nextTurn, openTempStore } from "./test-fixtures.ts";

const at = (seconds: number) => new Date(1_700_000_000_000 + seconds * 1000);

describe("SQLite PromptStore", () => {
  let store: SqliteStore;
  let dispose: () => Promise<void>;
  let url: string;
  let acme: TenantRecord;

  beforeEach(async () => {
    const opened = await openTempStore();
    ({ store, dispose } = opened);
    url = `file:${opened.store.path}`;
    acme = await addTenant(store, "acme");
  });
  afterEach(() => dispose());

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

  test("remembered resolutions follow pushes and tag moves made here, or by another connection from the next turn", async () => {
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

    // Another connection (the CLI is another process) pushes and moves the tag back: seen from
    // the next event-loop turn (the data version is read once per turn).
    const second = await openSqliteStore({ url });
    try {
      const v3 = (await push(second, acme.id, "greet", "v3")).version;
      await nextTurn();
      expect(await resolve(acme.id, "greet", { kind: "latest" })).toEqual(v3);
      await second.prompts.setTag(acme.id, "greet", { kind: "number", version: 1 }, "stable", at(4));
      await nextTurn();
      expect(await resolve(acme.id, "greet", { kind: "tag", tag: "stable" })).toEqual(v1);
    } finally {
      await second.close();
    }
  });
});
