/**
 * Structured logs at LOG_LEVEL=debug, read from the real server's captured output: every line is
 * JSON, every request has an access line with its request id, an internal error is logged with
 * the request id of the response that reported it, and no API key, stream token, run envVars
 * value or environment env var value ever appears, whichever route or failure carried it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, startServer, type TestServer, waitForRun } from "../support/server.ts";
import { SseConnection } from "../support/sse.ts";
import { createTenant, echoPrompt, pushPrompts, type Tenant, waitUntil } from "./support.ts";

let server: TestServer;
let tenant: Tenant;
const runEnvValue = `run-env-secret-${crypto.randomUUID()}`;
const environmentValue = `environment-secret-${crypto.randomUUID()}`;
const secrets: string[] = [runEnvValue, environmentValue];

beforeAll(async () => {
  // No demo seed: the demo banner prints its key once on purpose; this tenant's key is never printed.
  server = await startServer({ seedDemo: false, env: { LOG_LEVEL: "debug" } });
  tenant = await createTenant(server, "logged");
  secrets.push(tenant.apiKey);
  await pushPrompts(server, tenant.id, [echoPrompt("echo")]);
  const set = await server.cli("envs", "set", tenant.id, "production", `VENDOR_TOKEN=${environmentValue}`);
  expect(set.code).toBe(0);
});
afterAll(async () => {
  await server?.dispose();
});

interface LogLine {
  level: number;
  msg?: string;
  requestId?: string;
  route?: string;
  status?: number;
  [key: string]: unknown;
}

/** The server's JSON log lines (the ready line printed for the test harness excluded). */
const logLines = (): LogLine[] =>
  server
    .logs()
    .split("\n")
    .filter((line) => line.startsWith("{") && line.includes('"level"'))
    .map((line) => JSON.parse(line) as LogLine);

const client = () => ({ url: server.url, apiKey: tenant.apiKey });

describe("structured logs", () => {
  test("secrets never reach the logs, whatever route, header or failure carried them", async () => {
    // A run with envVars, read back; a run that fails validation with envVars in the body.
    const created = await api(client(), "/api/v1/prompts/echo/latest/runs", {
      method: "POST",
      json: { inputs: { text: "hello logs" }, envVars: { API_TOKEN: runEnvValue } },
      headers: { "x-request-id": "create-with-env" },
    });
    expect(created.status).toBe(202);
    const { id, thread } = (await created.json()) as { id: string; thread: string };
    await waitForRun(client(), id);
    const invalid = await api(client(), "/api/v1/prompts/echo/latest/runs", {
      method: "POST",
      json: { inputs: { text: 1 }, envVars: { lower_case: runEnvValue } },
    });
    expect(invalid.status).toBe(400);

    // Stream tokens: minted, used in the header and in ?token=, and forged.
    const minted = await api(client(), `/api/v1/threads/${thread}/stream-token`, { method: "POST" });
    const { token, url } = (await minted.json()) as { token: string; url: string };
    secrets.push(token);
    for (const query of [false, true]) {
      const connection = await SseConnection.open(url, { token, query });
      await connection.waitFor((event) => event.event === "ready");
      connection.close();
    }
    expect((await fetch(`${url}?token=${token}x`)).status).toBe(401);

    // The key where it does not belong: wrong scheme, a revoked copy, a tRPC call, a bad route.
    await fetch(`${server.url}/api/v1/promptruns/${id}`, {
      headers: { authorization: `Basic ${tenant.apiKey}` },
    });
    await fetch(`${server.url}/trpc/run.get?input=${encodeURIComponent(JSON.stringify({ id }))}`, {
      headers: { authorization: `Bearer ${tenant.apiKey}` },
    });
    await fetch(`${server.url}/no/such/route?key=${tenant.apiKey}`, {
      headers: { authorization: `Bearer ${tenant.apiKey}`, "x-api-key": tenant.apiKey },
    });
    await api(client(), `/api/v1/threads/${thread}/stream-token`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.apiKey.slice(0, -2)}zz` },
    });

    // The access lines of the requests above are in (pino writes asynchronously).
    await waitUntil(() => logLines().some((line) => line.requestId === "create-with-env"), "access log line");
    const output = server.logs();
    for (const secret of secrets) {
      expect(output.includes(secret)).toBe(false);
      // Nor a long piece of one (a truncated or partly masked copy).
      expect(output.includes(secret.slice(4, 24))).toBe(false);
    }
  });

  test("every line is JSON; each request has a debug access line with id, method, route template and status", async () => {
    const response = await api(client(), `/api/v1/promptruns/${crypto.randomUUID()}`, {
      headers: { "x-request-id": "access-line-check" },
    });
    expect(response.status).toBe(404);
    expect(response.headers.get("x-request-id")).toBe("access-line-check");
    await waitUntil(() => logLines().some((line) => line.requestId === "access-line-check"), "access line");
    const access = logLines().find((line) => line.requestId === "access-line-check")!;
    expect(access).toMatchObject({
      level: 20,
      msg: "request",
      method: "GET",
      route: "/api/v1/promptruns/:id",
      status: 404,
    });
    expect(typeof access.durationMs).toBe("number");
    // Raw paths (ids, query strings) are not access-log labels.
    expect(logLines().some((line) => typeof line.route === "string" && line.route.includes("?"))).toBe(false);

    const lines = server
      .logs()
      .split("\n")
      .filter((line) => line.trim() !== "");
    for (const line of lines) {
      expect(() => JSON.parse(line)).not.toThrow();
    }
  });

  test("an internal error is a generic 500 and is logged, with its stack, under the response's request id", async () => {
    const created = await api(client(), "/api/v1/prompts/echo/latest/runs", {
      method: "POST",
      json: { inputs: { text: "to be corrupted" } },
    });
    const { id } = (await created.json()) as { id: string };
    await waitForRun(client(), id);
    // Corrupt the stored data from outside, as a bad disk or a manual edit would: on SQLite a
    // row's JSON text; Postgres' json type refuses that, so there a column goes missing instead.
    // (This is the file's last test: the server is disposed after it.)
    if (server.dialect === "sqlite") {
      await server.sql("update runs set cost = '{not json' where id = ?", [id], { write: true });
    } else {
      await server.sql("alter table runs rename column cost to cost_moved_away");
    }

    const response = await api(client(), `/api/v1/promptruns/${id}`);
    expect(response.status).toBe(500);
    const requestId = response.headers.get("x-request-id")!;
    const body = await response.text();
    expect(JSON.parse(body)).toEqual({ error: "internal server error", code: "internal" });
    expect(body).not.toContain("at ");

    await waitUntil(
      () => logLines().some((line) => line.level === 50 && line.requestId === requestId),
      "the error line",
    );
    const logged = logLines().find((line) => line.level === 50 && line.requestId === requestId)!;
    expect(logged).toMatchObject({ msg: "unhandled error", method: "GET", path: `/api/v1/promptruns/${id}` });
    expect(JSON.stringify(logged.err)).toContain("stack");
  });
});
