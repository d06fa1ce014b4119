/**
 * Stream-token expiry and clock skew. Tokens are HS256 JWTs; this suite signs its own with the
 * server's secret (HKDF-derived key, as the server does) to control `exp` to the second: a token
 * expired by 1 s is refused (no leeway), one valid for a few seconds more is accepted, and an
 * open stream is ended with `end` {reason: "token_expired"} once its token expires.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac, hkdfSync, randomUUID } from "node:crypto";
import { api, startServer, type TestServer } from "../support/server.ts";
import { SseConnection } from "../support/sse.ts";

const SECRET = `token-expiry-suite-${"s".repeat(32)}`;
let server: TestServer;

beforeAll(async () => {
  server = await startServer({ env: { PROMPTRUN_SECRET: SECRET, PROMPTRUN_PING_INTERVAL_MS: "300" } });
});
afterAll(async () => {
  await server?.dispose();
});

const base64url = (value: string | Buffer) => Buffer.from(value).toString("base64url");

/** A stream token as the server would sign it, with the claims given. */
function signToken(claims: Record<string, unknown>): string {
  const key = Buffer.from(hkdfSync("sha256", SECRET, "promptrun", "promptrun/stream-token/v1", 32));
  const header = base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));
  const payload = base64url(JSON.stringify(claims));
  const signature = createHmac("sha256", key).update(`${header}.${payload}`).digest("base64url");
  return `${header}.${payload}.${signature}`;
}

const claimsFor = (thread: string, exp: number) => ({
  sub: server.tenantId,
  aud: "promptrun:stream",
  thread,
  scope: "thread:read",
  iat: exp - 300,
  exp,
  jti: randomUUID(),
});

const nowSeconds = () => Math.floor(Date.now() / 1000);
const streamUrl = (thread: string) => `${server.url}/stream/${thread}`;

describe("stream token expiry (no clock-skew leeway)", () => {
  test("a token whose exp passed 1 s ago is refused; the same token valid for 5 s more is accepted", async () => {
    const thread = crypto.randomUUID();
    const valid = await SseConnection.open(streamUrl(thread), {
      token: signToken(claimsFor(thread, nowSeconds() + 5)),
    });
    expect(valid.status).toBe(200);
    await valid.waitFor((event) => event.event === "ready");
    valid.close();

    const expired = await fetch(streamUrl(thread), {
      headers: { authorization: `Bearer ${signToken(claimsFor(thread, nowSeconds() - 1))}` },
    });
    expect(expired.status).toBe(401);
    expect(((await expired.json()) as { error: string }).error).toBe("invalid or expired stream token");
  });

  test("a token expiring at this very second is already refused (exp is exclusive)", async () => {
    const thread = crypto.randomUUID();
    const response = await fetch(streamUrl(thread), {
      headers: { authorization: `Bearer ${signToken(claimsFor(thread, nowSeconds()))}` },
    });
    expect(response.status).toBe(401);
  });

  test("claims that do not match are refused: another audience, another scope, another thread, a forged signature", async () => {
    const thread = crypto.randomUUID();
    const exp = nowSeconds() + 60;
    const refusals: Array<[string, number]> = [
      [signToken({ ...claimsFor(thread, exp), aud: "something-else" }), 401],
      [signToken({ ...claimsFor(thread, exp), scope: "thread:write" }), 401],
      [signToken(claimsFor(crypto.randomUUID(), exp)), 403],
      [`${signToken(claimsFor(thread, exp)).slice(0, -4)}AAAA`, 401],
      [signToken({ ...claimsFor(thread, exp), exp: undefined }), 401],
    ];
    for (const [token, status] of refusals) {
      const response = await fetch(streamUrl(thread), { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(status);
    }
  });

  test("an open stream ends with `end` token_expired once its token expires", async () => {
    const thread = crypto.randomUUID();
    const connection = await SseConnection.open(streamUrl(thread), {
      token: signToken(claimsFor(thread, nowSeconds() + 2)),
    });
    expect(connection.status).toBe(200);
    const end = await connection.waitFor((event) => event.event === "end", 10_000);
    expect(end.data.reason).toBe("token_expired");
    await connection.done;
  });

  test("the server's own tokens carry exp = iat + PROMPTRUN_STREAM_TOKEN_TTL and expiresAt matches exp", async () => {
    const thread = crypto.randomUUID();
    const minted = await api(server, `/api/v1/threads/${thread}/stream-token`, { method: "POST" });
    const { token, expiresAt } = (await minted.json()) as { token: string; expiresAt: string };
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as {
      iat: number;
      exp: number;
    };
    expect(claims.exp - claims.iat).toBe(300);
    expect(new Date(expiresAt).getTime()).toBe(claims.exp * 1000);
  });
});
