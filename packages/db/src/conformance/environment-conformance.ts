import { beforeEach, expect, test } from "bun:test";
import type { TenantRecord } from "@promptrun/core";
import { addTenant, at } from "@promptrun/core/testing";
import type { ConformanceContext } from "./conformance-context.ts";

export const environmentConformance = ({ store }: ConformanceContext): void => {
  let acme: TenantRecord;
  let other: TenantRecord;
  beforeEach(async () => {
    acme = await addTenant(store(), "acme");
    other = await addTenant(store(), "other");
  });

  test("ensure creates an environment once and then returns it, also when raced", async () => {
    const firstId = Bun.randomUUIDv7();
    const created = await store().environments.ensure(acme.id, "production", firstId, at(1));
    expect(created).toEqual({ id: firstId, tenantId: acme.id, name: "production", createdAt: at(1) });
    const again = await store().environments.ensure(acme.id, "production", Bun.randomUUIDv7(), at(2));
    expect(again).toEqual(created);
    expect(await store().environments.get(acme.id, "production")).toEqual(created);
    expect(await store().environments.get(acme.id, "staging")).toBeNull();

    const raced = await Promise.all(
      Array.from({ length: 8 }, () =>
        store().environments.ensure(acme.id, "raced", Bun.randomUUIDv7(), at(3)),
      ),
    );
    expect(new Set(raced.map((environment) => environment.id)).size).toBe(1);
  });

  test("names are per tenant and listed in byte order", async () => {
    const mine = await store().environments.ensure(acme.id, "production", Bun.randomUUIDv7(), at(1));
    const theirs = await store().environments.ensure(other.id, "production", Bun.randomUUIDv7(), at(1));
    await store().environments.ensure(acme.id, "staging", Bun.randomUUIDv7(), at(1));
    await store().environments.ensure(acme.id, "Preview", Bun.randomUUIDv7(), at(1));
    expect(theirs.id).not.toBe(mine.id);
    expect((await store().environments.list(acme.id)).map((environment) => environment.name)).toEqual([
      "Preview",
      "production",
      "staging",
    ]);
    expect(await store().environments.list(other.id)).toEqual([theirs]);
    expect(await store().environments.get(other.id, "staging")).toBeNull();
  });

  test("an environment of an unknown tenant is refused", async () => {
    await expect(
      store().environments.ensure(Bun.randomUUIDv7(), "production", Bun.randomUUIDv7(), at(1)),
    ).rejects.toMatchObject({ code: "invalid" });
  });

  test("env vars are set, overwritten, unset and kept per environment", async () => {
    const production = await store().environments.ensure(acme.id, "production", Bun.randomUUIDv7(), at(1));
    const staging = await store().environments.ensure(acme.id, "staging", Bun.randomUUIDv7(), at(1));
    await store().environments.setEnvVars(production.id, { OPENAI_API_KEY: "enc-1", OTHER: "enc-2" }, at(2));
    await store().environments.setEnvVars(staging.id, { OPENAI_API_KEY: "enc-staging" }, at(2));
    await store().environments.setEnvVars(production.id, { OPENAI_API_KEY: "enc-3" }, at(3));
    await store().environments.setEnvVars(production.id, {}, at(3));
    expect(await store().environments.getEnvVars(production.id)).toEqual({
      OPENAI_API_KEY: "enc-3",
      OTHER: "enc-2",
    });

    await store().environments.unsetEnvVars(production.id, ["OTHER", "NEVER_SET"]);
    await store().environments.unsetEnvVars(production.id, []);
    expect(await store().environments.getEnvVars(production.id)).toEqual({ OPENAI_API_KEY: "enc-3" });
    expect(await store().environments.getEnvVars(staging.id)).toEqual({ OPENAI_API_KEY: "enc-staging" });
    expect(await store().environments.getEnvVars(Bun.randomUUIDv7())).toEqual({});

    const all = await store().environments.allEncryptedValues();
    expect(all).toHaveLength(2);
    expect(all).toContainEqual({ environmentId: production.id, key: "OPENAI_API_KEY", value: "enc-3" });
    expect(all).toContainEqual({ environmentId: staging.id, key: "OPENAI_API_KEY", value: "enc-staging" });
  });

  test("env vars of an unknown environment are refused", async () => {
    await expect(
      store().environments.setEnvVars(Bun.randomUUIDv7(), { KEY: "value" }, at(1)),
    ).rejects.toMatchObject({ code: "invalid" });
  });
};
