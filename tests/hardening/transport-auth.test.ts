/**
 * Only `Authorization: Bearer <key>` authenticates, on REST and tRPC alike (docs/SECURITY.md):
 * a bare key, another scheme, two spaces, two credentials or a key in the query string is a 401
 * with `WWW-Authenticate: Bearer`. The SSE stream keeps `Bearer <token>` or `?token=`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, startServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let runId: string;
beforeAll(async () => {
  server = await startServer();
  const created = await api(server, "/api/v1/prompts/greet/latest/runs", {
    method: "POST",
    json: { inputs: { name: "Ada" } },
  });
  runId = ((await created.json()) as { id: string }).id;
});
afterAll(async () => {
  await server?.dispose();
});

/** Every Authorization value that must not authenticate, given the tenant's real key. */
const refusedHeaders = (key: string): Record<string, string> => ({
  "bare key": key,
  Basic: `Basic ${key}`,
  "Basic of key:": `Basic ${btoa(`${key}:`)}`,
  "two spaces": `Bearer  ${key}`,
  "a tab": `Bearer\t${key}`,
  "two credentials (comma)": `Bearer ${key}, Bearer ${key}`,
  "two credentials (space)": `Bearer ${key} ${key}`,
  "no space": `Bearer${key}`,
});

const fetchWith = (path: string, authorization: string | null, init: RequestInit = {}) => {
  const headers = new Headers(init.headers);
  if (authorization !== null) headers.set("authorization", authorization);
  return fetch(`${server.url}${path}`, { ...init, headers });
};

async function expectUnauthorized(response: Response, label: string) {
  expect({ label, status: response.status }).toEqual({ label, status: 401 });
  expect(response.headers.get("www-authenticate")).toBe("Bearer");
  const body = (await response.json()) as Record<string, unknown>;
  expect(body.error).toBeDefined();
}

describe("REST", () => {
  test("`Bearer <key>` in any case authenticates", async () => {
    for (const scheme of ["Bearer", "bearer", "BEARER"]) {
      const response = await fetchWith(`/api/v1/promptruns/${runId}`, `${scheme} ${server.apiKey}`);
      expect({ scheme, status: response.status }).toEqual({ scheme, status: 200 });
    }
  });

  test("GET run: a bare key, Basic, two spaces or two credentials are 401 with WWW-Authenticate", async () => {
    for (const [label, header] of Object.entries(refusedHeaders(server.apiKey))) {
      await expectUnauthorized(await fetchWith(`/api/v1/promptruns/${runId}`, header), label);
    }
  });

  test("create run and stream token: a bare key is 401", async () => {
    await expectUnauthorized(
      await fetchWith("/api/v1/prompts/greet/latest/runs", server.apiKey, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ inputs: { name: "Ada" } }),
      }),
      "create run",
    );
    await expectUnauthorized(
      await fetchWith(`/api/v1/threads/${crypto.randomUUID()}/stream-token`, server.apiKey, {
        method: "POST",
      }),
      "stream token",
    );
  });

  test("a key in the query string is 401", async () => {
    for (const name of ["api_key", "apiKey", "key", "token", "access_token"]) {
      await expectUnauthorized(
        await fetchWith(`/api/v1/promptruns/${runId}?${name}=${server.apiKey}`, null),
        `?${name}=`,
      );
    }
  });

  test("a missing key is 401 with WWW-Authenticate", async () => {
    await expectUnauthorized(await fetchWith(`/api/v1/promptruns/${runId}`, null), "missing");
  });
});

describe("tRPC", () => {
  const runGet = (authorization: string | null, query = "") =>
    fetchWith(`/trpc/run.list?input=${encodeURIComponent(JSON.stringify({}))}${query}`, authorization);

  test("`Bearer <key>` authenticates", async () => {
    expect((await runGet(`bearer ${server.apiKey}`)).status).toBe(200);
  });

  test("a bare key, Basic, two spaces or two credentials are 401 with WWW-Authenticate", async () => {
    for (const [label, header] of Object.entries(refusedHeaders(server.apiKey))) {
      const response = await runGet(header);
      expect({ label, status: response.status }).toEqual({ label, status: 401 });
      expect(response.headers.get("www-authenticate")).toBe("Bearer");
    }
  });

  test("a key in the query string is 401", async () => {
    const response = await runGet(null, `&api_key=${server.apiKey}&token=${server.apiKey}`);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
  });
});

describe("SSE stream", () => {
  test("`Bearer <token>` and `?token=` open the stream; a bare token is 401", async () => {
    const thread = crypto.randomUUID();
    const issued = await api(server, `/api/v1/threads/${thread}/stream-token`, { method: "POST" });
    const { token } = (await issued.json()) as { token: string };
    const open = async (init: { header?: string; query?: string }) => {
      const controller = new AbortController();
      const response = await fetchWith(`/stream/${thread}${init.query ?? ""}`, init.header ?? null, {
        signal: controller.signal,
      });
      const status = response.status;
      const authenticate = response.headers.get("www-authenticate");
      controller.abort();
      await response.body?.cancel().catch(() => {});
      return { status, authenticate };
    };
    expect((await open({ header: `Bearer ${token}` })).status).toBe(200);
    expect((await open({ query: `?token=${token}` })).status).toBe(200);
    expect(await open({ header: token })).toEqual({ status: 401, authenticate: "Bearer" });
    expect(await open({ header: `Bearer  ${token}` })).toEqual({ status: 401, authenticate: "Bearer" });
  });
});
