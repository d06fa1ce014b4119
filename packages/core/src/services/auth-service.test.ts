import { describe, expect, test } from "bun:test";
import { rejection } from "../testing/rejection.ts";
import { createServiceFixture } from "../testing/service-fixture.ts";

describe("AuthService", () => {
  test("resolves `Bearer <key>` (scheme in any case, one space) to its tenant", async () => {
    const { services, createTenant } = createServiceFixture();
    const { tenant, apiKey } = await createTenant();
    expect((await services.auth.authenticate(`Bearer ${apiKey}`)).id).toBe(tenant.id);
    expect((await services.auth.authenticate(`bEaReR ${apiKey}`)).id).toBe(tenant.id);
  });

  test("only `Bearer <key>` authenticates: a bare key, another scheme, two spaces or two credentials are unauthorized", async () => {
    const { services, createTenant } = createServiceFixture();
    const { apiKey } = await createTenant();
    const { apiKey: otherKey } = await createTenant();
    const malformed = "malformed Authorization header (expected 'Bearer <API key>')";
    for (const header of [
      apiKey,
      `Basic ${apiKey}`,
      `Token ${apiKey}`,
      `Bearer  ${apiKey}`,
      `Bearer\t${apiKey}`,
      `Bearer ${apiKey}, Bearer ${otherKey}`,
      `Bearer ${apiKey} ${otherKey}`,
      `Bearer ${apiKey},${otherKey}`,
      `Bearer:${apiKey}`,
    ]) {
      const error = await rejection(services.auth.authenticate(header));
      expect({ header, code: error.code, message: error.message }).toEqual({
        header,
        code: "unauthorized",
        message: malformed,
      });
    }
  });

  test("missing, malformed, unknown and revoked keys are unauthorized", async () => {
    const { services, createTenant } = createServiceFixture();
    const { apiKey } = await createTenant();
    const cases: Array<[string | null, string]> = [
      [null, "missing API key (Authorization: Bearer <API key>)"],
      ["   ", "missing API key (Authorization: Bearer <API key>)"],
      [`Basic ${apiKey}`, "malformed Authorization header (expected 'Bearer <API key>')"],
      ["Bearer", "malformed Authorization header (expected 'Bearer <API key>')"],
      [`Bearer ${apiKey} extra`, "malformed Authorization header (expected 'Bearer <API key>')"],
      ["Bearer sk-something", "invalid API key"],
      [`Bearer pr_live_${"A".repeat(43)}`, "invalid API key"],
    ];
    for (const [header, message] of cases) {
      const error = await rejection(services.auth.authenticate(header));
      expect({ header, code: error.code, message: error.message }).toEqual({
        header,
        code: "unauthorized",
        message,
      });
    }
    await services.tenants.revokeApiKey(apiKey);
    const revoked = await rejection(services.auth.authenticate(`Bearer ${apiKey}`));
    // The stores never return a revoked key, so it reads as unknown.
    expect([revoked.code, revoked.message]).toEqual(["unauthorized", "invalid API key"]);
  });

  test("an inactive subscription is forbidden", async () => {
    const { services, createTenant } = createServiceFixture();
    const { tenant, apiKey } = await createTenant("Idle", false);
    const authenticated = await services.auth.authenticate(`Bearer ${apiKey}`);
    expect(authenticated.id).toBe(tenant.id);
    expect(() => services.auth.requireActiveSubscription(authenticated)).toThrow("no active subscription");
    await services.tenants.setSubscription(tenant.id, true);
    services.auth.requireActiveSubscription(await services.auth.authenticate(`Bearer ${apiKey}`));
  });
});
