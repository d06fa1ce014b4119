/**
 * Per-tenant quotas (API keys, environments, webhooks, prompt versions) and the active-subscription
 * rule for writes, through the real server's tRPC endpoint and the CLI on the same database.
 * Limits are set small so the last slot is reached in a few requests.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type TestServer } from "./support/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({
    seedDemo: false,
    env: {
      PROMPTRUN_MAX_API_KEYS: "3",
      PROMPTRUN_MAX_ENVIRONMENTS: "3",
      PROMPTRUN_MAX_WEBHOOKS: "2",
      PROMPTRUN_MAX_PROMPT_VERSIONS: "3",
    },
  });
});

afterAll(async () => {
  await server?.dispose();
});

interface TrpcAnswer {
  status: number;
  body: { result?: { data: unknown }; error?: { message: string; data: { errorCode: string } } };
}

async function trpc(apiKey: string, procedure: string, input?: unknown): Promise<TrpcAnswer> {
  const response = await fetch(`${server.url}/trpc/${procedure}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    ...(input === undefined ? {} : { body: JSON.stringify(input) }),
  });
  return { status: response.status, body: (await response.json()) as TrpcAnswer["body"] };
}

async function newTenant(name: string, options: { inactive?: boolean } = {}) {
  const created = await server.cli<{ tenant: { id: string }; apiKey: string }>(
    "tenants",
    "create",
    name,
    ...(options.inactive ? ["--inactive"] : []),
  );
  expect(created.code).toBe(0);
  return { tenantId: created.json.tenant.id, apiKey: created.json.apiKey };
}

const prompt = (slug: string, text: string) => ({
  slug,
  model: "dev:echo",
  messages: [{ role: "user", content: text }],
});

const expectQuotaError = (answer: TrpcAnswer, noun: string, setting: string) => {
  expect(answer.status).toBe(409);
  expect(answer.body.error?.data.errorCode).toBe("conflict");
  expect(answer.body.error?.message).toContain(`quota exceeded: a tenant may have at most`);
  expect(answer.body.error?.message).toContain(noun);
  expect(answer.body.error?.message).toContain(setting);
};

describe("per-tenant quotas", () => {
  test("API keys: the one past the limit is 409; a revoked key frees its slot; the CLI is held to it too", async () => {
    const { tenantId, apiKey } = await newTenant("keys");
    expect((await trpc(apiKey, "key.create")).status).toBe(200);
    expect((await trpc(apiKey, "key.create")).status).toBe(200);
    expectQuotaError(await trpc(apiKey, "key.create"), "3 active API keys", "PROMPTRUN_MAX_API_KEYS");
    const cli = await server.cli<{ error: string }>("keys", "create", tenantId);
    expect(cli.code).toBe(1);
    expect(cli.json.error).toContain("PROMPTRUN_MAX_API_KEYS");
    const keys = await server.sql<{ n: number }>(
      "SELECT count(*) AS n FROM api_keys WHERE tenant_id = ? AND revoked_at IS NULL",
      [tenantId],
    );
    expect(Number(keys[0]!.n)).toBe(3);

    const list = await fetch(`${server.url}/trpc/key.list`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const listed = (await list.json()) as { result: { data: Array<{ id: string; prefix: string }> } };
    const other = listed.result.data.find((key) => !apiKey.startsWith(key.prefix));
    expect((await trpc(apiKey, "key.revoke", { id: other!.id })).status).toBe(200);
    // Five at once for the one free slot: exactly one gets it.
    const racing = await Promise.all(Array.from({ length: 5 }, () => trpc(apiKey, "key.create")));
    expect(racing.map((answer) => answer.status).sort()).toEqual([200, 409, 409, 409, 409]);
  });

  test("environments: `production` counts; updating an existing one is never refused", async () => {
    const { tenantId, apiKey } = await newTenant("environments");
    expect(
      (await trpc(apiKey, "environment.set", { environment: "staging", values: { A: "1" } })).status,
    ).toBe(200);
    const racing = await Promise.all(
      ["dev", "qa", "eu", "us"].map((environment) =>
        trpc(apiKey, "environment.set", { environment, values: { A: "1" } }),
      ),
    );
    expect(racing.map((answer) => answer.status).sort()).toEqual([200, 409, 409, 409]);
    expectQuotaError(
      await trpc(apiKey, "environment.set", { environment: "extra", values: { A: "1" } }),
      "3 environments",
      "PROMPTRUN_MAX_ENVIRONMENTS",
    );
    expect(
      (await trpc(apiKey, "environment.set", { environment: "staging", values: { B: "2" } })).status,
    ).toBe(200);
    const cli = await server.cli<{ error: string }>("envs", "set", tenantId, "cli-made", "A=1");
    expect(cli.code).toBe(1);
    expect(cli.json.error).toContain("PROMPTRUN_MAX_ENVIRONMENTS");
    const rows = await server.sql<{ n: number }>(
      "SELECT count(*) AS n FROM environments WHERE tenant_id = ?",
      [tenantId],
    );
    expect(Number(rows[0]!.n)).toBe(3);
  });

  test("webhooks: counted across the tenant's environments", async () => {
    const { tenantId, apiKey } = await newTenant("webhooks");
    await trpc(apiKey, "environment.set", { environment: "staging", values: { A: "1" } });
    const url = "https://example.com/hook";
    const racing = await Promise.all([
      trpc(apiKey, "webhook.create", { environment: "production", url }),
      trpc(apiKey, "webhook.create", { environment: "staging", url }),
      trpc(apiKey, "webhook.create", { environment: "staging", url }),
    ]);
    expect(racing.map((answer) => answer.status).sort()).toEqual([200, 200, 409]);
    expectQuotaError(
      await trpc(apiKey, "webhook.create", { environment: "production", url }),
      "2 webhooks",
      "PROMPTRUN_MAX_WEBHOOKS",
    );
    const cli = await server.cli<{ error: string }>("webhooks", "add", tenantId, "production", url);
    expect(cli.code).toBe(1);
    expect(cli.json.error).toContain("PROMPTRUN_MAX_WEBHOOKS");
    const rows = await server.sql<{ n: number }>("SELECT count(*) AS n FROM webhooks WHERE tenant_id = ?", [
      tenantId,
    ]);
    expect(Number(rows[0]!.n)).toBe(2);
  });

  test("prompt versions: counted across prompts; a push that would pass the limit writes nothing; identical pushes still work", async () => {
    const { tenantId, apiKey } = await newTenant("versions");
    const first = await trpc(apiKey, "prompt.push", { files: [prompt("a", "one"), prompt("b", "one")] });
    expect(first.status).toBe(200);
    // Two new versions with one slot left: refused whole, nothing of it stored.
    expectQuotaError(
      await trpc(apiKey, "prompt.push", { files: [prompt("a", "two"), prompt("c", "one")] }),
      "3 prompt versions",
      "PROMPTRUN_MAX_PROMPT_VERSIONS",
    );
    expect((await trpc(apiKey, "prompt.push", { files: [prompt("a", "two")] })).status).toBe(200);
    expect(
      (await trpc(apiKey, "prompt.push", { files: [prompt("a", "two"), prompt("b", "one")] })).status,
    ).toBe(200);
    expectQuotaError(
      await trpc(apiKey, "prompt.push", { files: [prompt("b", "two")] }),
      "3 prompt versions",
      "PROMPTRUN_MAX_PROMPT_VERSIONS",
    );
    const rows = await server.sql<{ n: number }>(
      "SELECT count(*) AS n FROM prompt_versions v JOIN prompts p ON p.id = v.prompt_id WHERE p.tenant_id = ?",
      [tenantId],
    );
    expect(Number(rows[0]!.n)).toBe(3);
  });
});

describe("writes need an active subscription", () => {
  test("tRPC writes are 403 for an inactive tenant; reads and clean-up stay open; the CLI as operator still works", async () => {
    const { tenantId, apiKey } = await newTenant("lapsed", { inactive: true });
    const writes: Array<[string, unknown]> = [
      ["prompt.push", { files: [prompt("a", "one")] }],
      ["prompt.tag", { slug: "a", version: "1", tag: "stable" }],
      ["key.create", undefined],
      ["environment.set", { environment: "production", values: { A: "1" } }],
      ["webhook.create", { environment: "production", url: "https://example.com/hook" }],
    ];
    for (const [procedure, input] of writes) {
      const answer = await trpc(apiKey, procedure, input);
      expect({ procedure, status: answer.status, message: answer.body.error?.message }).toEqual({
        procedure,
        status: 403,
        message: "no active subscription",
      });
    }
    const keys = await fetch(`${server.url}/trpc/key.list`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(keys.status).toBe(200);
    const tables = await server.sql<{ n: number }>(
      "SELECT (SELECT count(*) FROM prompts WHERE tenant_id = ?) + (SELECT count(*) FROM webhooks WHERE tenant_id = ?) AS n",
      [tenantId, tenantId],
    );
    expect(Number(tables[0]!.n)).toBe(0);

    const pushed = await server.cli<{ apiKey: string }>("keys", "create", tenantId);
    expect(pushed.code).toBe(0);
  });
});
