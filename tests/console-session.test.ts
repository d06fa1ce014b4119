/**
 * The console's sessions on the real server (`promptrun serve`), on SQLite or Postgres
 * (PROMPTRUN_E2E_DATABASE): stored hashed in the database, kept across a restart, ended at once
 * when the CLI (another process) revokes the key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { browserCookie, CONSOLE_COOKIE, signInToConsole } from "./support/console-session.ts";
import { startServer, type TestServer } from "./support/server.ts";
import { tablesContaining } from "./support/tables.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.dispose();
});

const prompts = (session: { headers: Record<string, string> }) =>
  fetch(`${server.url}/api/v1/prompts`, { headers: session.headers });

describe("console sessions on the real server", () => {
  test("a session is stored only as its hash, survives a restart, and ends when the CLI revokes its key", async () => {
    const created = await server.cli<{ apiKey: string }>("keys", "create", server.tenantId);
    const session = await signInToConsole(server, created.json.apiKey);
    expect(session.tenant.id).toBe(server.tenantId);
    expect((await prompts(session)).status).toBe(200);

    const hash = createHash("sha256").update(session.token).digest("hex");
    expect(await tablesContaining(server, session.token)).toEqual([]);
    const sessionsTable =
      server.dialect === "postgres" ? '"public"."console_sessions"' : '"console_sessions"';
    expect(await tablesContaining(server, hash)).toEqual([sessionsTable]);

    server = await server.restart();
    expect((await prompts(session)).status).toBe(200);

    const revoked = await server.cli<{ revoked: number }>("keys", "revoke", created.json.apiKey);
    expect(revoked.json.revoked).toBe(1);
    expect((await prompts(session)).status).toBe(401);
  });

  test("the helper's browser cookie is the one the server sets", async () => {
    const response = await fetch(`${server.url}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiKey: server.apiKey }),
    });
    const setCookie = response.headers.get("set-cookie") ?? "";
    const token = setCookie.split(";", 1)[0]!.slice(CONSOLE_COOKIE.length + 1);
    expect(browserCookie(server, { token })).toEqual({
      name: CONSOLE_COOKIE,
      value: token,
      url: server.url,
      httpOnly: true,
      secure: false,
      sameSite: "Strict",
    });
    expect(setCookie).toBe(`${CONSOLE_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict`);
  });
});
