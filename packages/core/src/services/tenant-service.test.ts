import { describe, expect, test } from "bun:test";
import { rejection } from "../testing/rejection.ts";
import { createServiceFixture } from "../testing/service-fixture.ts";

describe("TenantService", () => {
  test("create: the tenant, its production environment and a first key shown once", async () => {
    const { services, store } = createServiceFixture();
    const { tenant, apiKey } = await services.tenants.create("Acme");
    expect(tenant).toMatchObject({
      name: "Acme",
      subscriptionActive: true,
      createdAt: "2030-01-01T00:00:00.000Z",
    });
    expect(apiKey).toMatch(/^pr_live_[A-Za-z0-9_-]{43}$/);
    expect(await store.environments.get(tenant.id, "production")).not.toBeNull();
    const keys = await services.tenants.listApiKeys(tenant.id);
    expect(keys).toHaveLength(1);
    expect(keys[0]!.prefix).toBe(apiKey.slice(0, 16));
    expect(JSON.stringify(keys)).not.toContain(apiKey);
    expect((await services.tenants.create("Idle", { active: false })).tenant.subscriptionActive).toBe(false);
    expect((await services.tenants.list()).map((listed) => listed.name)).toEqual(["Acme", "Idle"]);
  });

  test("key lifecycle: create, list, revoke by full key and by unique prefix", async () => {
    const { services } = createServiceFixture();
    const { tenant, apiKey: first } = await services.tenants.create("Acme");
    const second = await services.tenants.createApiKey(tenant.id);
    const third = await services.tenants.createApiKey(tenant.id);
    expect(second.key.revokedAt).toBeNull();
    expect(await services.tenants.listApiKeys(tenant.id)).toHaveLength(3);

    expect(await services.tenants.revokeApiKey(first)).toEqual({ revoked: 1 });
    expect((await rejection(services.tenants.revokeApiKey(first))).code).toBe("not_found");
    expect(await services.tenants.revokeApiKey(` ${second.key.prefix} `)).toEqual({ revoked: 1 });
    expect((await rejection(services.auth.authenticate(`Bearer ${second.apiKey}`))).code).toBe(
      "unauthorized",
    );
    expect((await services.auth.authenticate(`Bearer ${third.apiKey}`)).id).toBe(tenant.id);

    const listed = await services.tenants.listApiKeys(tenant.id);
    expect(listed.filter((key) => key.revokedAt !== null)).toHaveLength(2);
  });

  test("revoke refuses prefixes too short to be specific, and unknown ones", async () => {
    const { services } = createServiceFixture();
    await services.tenants.create("Acme");
    const short = await rejection(services.tenants.revokeApiKey("pr_live_"));
    expect(short.code).toBe("invalid");
    const unknown = await rejection(services.tenants.revokeApiKey("pr_live_zzzzzzzz"));
    expect(unknown.code).toBe("not_found");
  });

  test("unknown tenants are not_found; subscriptions toggle", async () => {
    const { services } = createServiceFixture();
    const missing = "0190f1f0-0000-7000-8000-000000000000";
    expect((await rejection(services.tenants.get(missing))).message).toBe(`tenant '${missing}' not found`);
    expect((await rejection(services.tenants.setSubscription(missing, true))).code).toBe("not_found");
    expect((await rejection(services.tenants.createApiKey(missing))).code).toBe("not_found");
    const { tenant } = await services.tenants.create("Acme");
    expect((await services.tenants.setSubscription(tenant.id, false)).subscriptionActive).toBe(false);
    expect((await services.tenants.get(tenant.id)).subscriptionActive).toBe(false);
  });
});
