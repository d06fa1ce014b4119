import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { manualClock } from "../testing/clock.ts";
import { createMemoryStore } from "../testing/memory-store.ts";
import { rejection } from "../testing/rejection.ts";
import { createAuthService } from "./auth-service.ts";
import { CONSOLE_SESSION_RULES, createConsoleSessionService } from "./console-session-service.ts";
import { createTenantService } from "./tenant-service.ts";

const HOUR = 3600_000;
const ADDRESS = "203.0.113.7";

async function fixture() {
  const clock = manualClock(new Date("2030-01-01T00:00:00.000Z"));
  const store = createMemoryStore({ clock });
  const tenants = createTenantService({ store, clock });
  const sessions = createConsoleSessionService({ store, clock, auth: createAuthService({ store }) });
  const acme = await tenants.create("Acme");
  const other = await tenants.create("Other");
  return { clock, store, tenants, sessions, acme, other };
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("console sign-in", () => {
  test("an API key becomes a session: a 43-character token, stored only as its SHA-256", async () => {
    const { clock, store, sessions, acme } = await fixture();
    const signedIn = await sessions.signIn({ apiKey: acme.apiKey }, ADDRESS);
    expect(signedIn.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(signedIn.tenant).toEqual({ id: acme.tenant.id, name: "Acme" });
    expect(signedIn.expiresAt).toEqual(new Date(clock.now().getTime() + 7 * 24 * HOUR));

    expect(await store.consoleSessions.find(signedIn.token)).toBeNull();
    const stored = await store.consoleSessions.find(sha256(signedIn.token));
    const [key] = await store.tenants.listApiKeys(acme.tenant.id);
    expect(stored?.session).toEqual({
      tokenHash: sha256(signedIn.token),
      tenantId: acme.tenant.id,
      apiKeyId: key!.id,
      createdAt: clock.now(),
      lastSeenAt: clock.now(),
      expiresAt: signedIn.expiresAt,
    });

    const tenant = await sessions.authenticate(signedIn.token);
    expect(tenant).toMatchObject({
      id: acme.tenant.id,
      name: "Acme",
      apiKeyId: key!.id,
      apiKeyPrefix: key!.prefix,
    });
    // Two sign-ins are two sessions.
    expect((await sessions.signIn({ apiKey: acme.apiKey }, ADDRESS)).token).not.toBe(signedIn.token);
  });

  test("a wrong, malformed or revoked key is 401 with a message saying what to do", async () => {
    const { sessions, tenants, acme } = await fixture();
    await tenants.revokeApiKey(acme.apiKey);
    for (const apiKey of [`pr_live_${"A".repeat(43)}`, "sk-not-ours", "", acme.apiKey]) {
      const error = await rejection(sessions.signIn({ apiKey }, ADDRESS));
      expect({ apiKey, code: error.code }).toEqual({ apiKey, code: "unauthorized" });
      expect(error.message).toContain("this API key is not valid");
      expect(error.message).toContain("check it and try again");
    }
  });

  test("a body that is not {apiKey: string} is 400 and does not count as a failed sign-in", async () => {
    const { sessions, acme } = await fixture();
    for (const body of [null, "key", [], {}, { apiKey: 42 }, { apiKey: acme.apiKey, extra: true }]) {
      const error = await rejection(sessions.signIn(body, ADDRESS));
      expect({ body, code: error.code, message: error.message }).toEqual({
        body,
        code: "invalid",
        message: 'the body must be {"apiKey": "<API key>"}',
      });
    }
    expect((await sessions.signIn({ apiKey: acme.apiKey }, ADDRESS)).tenant.id).toBe(acme.tenant.id);
  });

  test("after 10 failures within a minute an address is refused (429, even with the right key) until the oldest leaves the window", async () => {
    const { clock, sessions, acme } = await fixture();
    const wrong = { apiKey: `pr_live_${"B".repeat(43)}` };
    for (let attempt = 1; attempt <= 10; attempt++) {
      expect((await rejection(sessions.signIn(wrong, ADDRESS))).code).toBe("unauthorized");
      clock.advance(2_000);
    }
    // The first failure was 20 s ago: it leaves the window in 40 s.
    const refused = await rejection(sessions.signIn({ apiKey: acme.apiKey }, ADDRESS));
    expect(refused.code).toBe("rate_limited");
    expect(refused.retryAfterSeconds).toBe(40);
    expect(refused.message).toBe("too many failed sign-ins from this address: try again in 40 s");
    // Another address is not held back.
    expect((await sessions.signIn({ apiKey: acme.apiKey }, "198.51.100.1")).tenant.id).toBe(acme.tenant.id);

    clock.advance(39_000);
    expect((await rejection(sessions.signIn(wrong, ADDRESS))).retryAfterSeconds).toBe(1);
    clock.advance(1_000);
    // One failure left the window: one attempt more.
    expect((await rejection(sessions.signIn(wrong, ADDRESS))).code).toBe("unauthorized");
    expect((await rejection(sessions.signIn(wrong, ADDRESS))).code).toBe("rate_limited");
    clock.advance(60_000);
    expect((await sessions.signIn({ apiKey: acme.apiKey }, ADDRESS)).tenant.id).toBe(acme.tenant.id);
  });

  test("a key keeps at most 50 live sessions: the 51st sign-in ends the oldest", async () => {
    const { clock, sessions, acme } = await fixture();
    const tokens: string[] = [];
    for (let index = 0; index < CONSOLE_SESSION_RULES.maxPerKey + 1; index++) {
      tokens.push((await sessions.signIn({ apiKey: acme.apiKey }, ADDRESS)).token);
      clock.advance(1);
    }
    expect((await rejection(sessions.authenticate(tokens[0]!))).code).toBe("unauthorized");
    for (const token of tokens.slice(1)) expect((await sessions.authenticate(token)).id).toBe(acme.tenant.id);
  });
});

describe("console session authentication", () => {
  test("an unknown, malformed or signed-out token is 401", async () => {
    const { sessions, acme } = await fixture();
    const { token } = await sessions.signIn({ apiKey: acme.apiKey }, ADDRESS);
    for (const bad of ["", "x", `${token}x`, "A".repeat(43), acme.apiKey]) {
      const error = await rejection(sessions.authenticate(bad));
      expect({ bad, code: error.code, message: error.message }).toEqual({
        bad,
        code: "unauthorized",
        message: "the console session has ended (expired, signed out or its API key revoked): sign in again",
      });
    }
    await sessions.signOut(token);
    expect((await rejection(sessions.authenticate(token))).code).toBe("unauthorized");
    // Signing out twice, or with nonsense, is harmless.
    await sessions.signOut(token);
    await sessions.signOut("not a token");
  });

  test("12 hours without a request end a session, and its row goes", async () => {
    const { clock, store, sessions, acme } = await fixture();
    const { token } = await sessions.signIn({ apiKey: acme.apiKey }, ADDRESS);
    clock.advance(12 * HOUR - 1);
    expect((await sessions.authenticate(token)).id).toBe(acme.tenant.id);
    // That request moved lastSeenAt: 12 h more from here.
    clock.advance(12 * HOUR - 1);
    expect((await sessions.authenticate(token)).id).toBe(acme.tenant.id);
    clock.advance(12 * HOUR);
    expect((await rejection(sessions.authenticate(token))).code).toBe("unauthorized");
    expect(await store.consoleSessions.find(sha256(token))).toBeNull();
  });

  test("7 days after sign-in a session ends however busy it was", async () => {
    const { clock, sessions, acme } = await fixture();
    const { token } = await sessions.signIn({ apiKey: acme.apiKey }, ADDRESS);
    for (let hour = 0; hour < 7 * 24 - 1; hour++) {
      clock.advance(HOUR);
      await sessions.authenticate(token);
    }
    clock.advance(HOUR - 1);
    expect((await sessions.authenticate(token)).id).toBe(acme.tenant.id);
    clock.advance(1);
    expect((await rejection(sessions.authenticate(token))).code).toBe("unauthorized");
  });

  test("lastSeenAt is written at most once a minute", async () => {
    const { clock, store, sessions, acme } = await fixture();
    const { token } = await sessions.signIn({ apiKey: acme.apiKey }, ADDRESS);
    const signedInAt = clock.now();
    const lastSeen = async () => (await store.consoleSessions.find(sha256(token)))?.session.lastSeenAt;
    clock.advance(59_999);
    await sessions.authenticate(token);
    expect(await lastSeen()).toEqual(signedInAt);
    clock.advance(1);
    await sessions.authenticate(token);
    expect(await lastSeen()).toEqual(clock.now());
  });

  test("revoking the key ends its sessions at once; other keys' sessions go on", async () => {
    const { store, tenants, sessions, acme, other } = await fixture();
    const second = await tenants.createApiKey(acme.tenant.id);
    const first = await sessions.signIn({ apiKey: acme.apiKey }, ADDRESS);
    const kept = await sessions.signIn({ apiKey: second.apiKey }, ADDRESS);
    const others = await sessions.signIn({ apiKey: other.apiKey }, ADDRESS);
    await sessions.authenticate(first.token);

    await tenants.revokeApiKey(acme.apiKey);
    expect((await rejection(sessions.authenticate(first.token))).code).toBe("unauthorized");
    expect(await store.consoleSessions.find(sha256(first.token))).toBeNull();
    expect(await sessions.authenticate(kept.token)).toMatchObject({
      id: acme.tenant.id,
      apiKeyId: second.key.id,
    });
    expect((await sessions.authenticate(others.token)).id).toBe(other.tenant.id);
  });

  test("a sign-in deletes the sessions that ended: expired, idle or of a revoked key", async () => {
    const { clock, store, tenants, sessions, acme, other } = await fixture();
    const idle = await sessions.signIn({ apiKey: acme.apiKey }, ADDRESS);
    const spare = await tenants.createApiKey(other.tenant.id);
    const revoked = await sessions.signIn({ apiKey: spare.apiKey }, ADDRESS);
    await tenants.revokeApiKey(spare.apiKey);
    clock.advance(12 * HOUR);
    const fresh = await sessions.signIn({ apiKey: other.apiKey }, ADDRESS);
    expect(await store.consoleSessions.find(sha256(idle.token))).toBeNull();
    expect(await store.consoleSessions.find(sha256(revoked.token))).toBeNull();
    expect(await store.consoleSessions.find(sha256(fresh.token))).not.toBeNull();
  });
});
