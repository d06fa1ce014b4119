/**
 * URLs a tenant supplies (webhooks, provider base URLs in run envVars) are refused on private
 * ranges unless PROMPTRUN_ALLOW_PRIVATE_URLS=true, whatever their spelling; and the server's own
 * provider key is never sent to a base URL that came from a tenant.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakeProviderServer, startFakeOpenAI } from "@promptrun/core/testing";
import { api, startServer, type TestServer, waitForRun } from "../support/server.ts";
import { pushPrompts } from "./support.ts";

let provider: FakeProviderServer;
const servers: TestServer[] = [];
const SERVER_KEY = `sk-server-own-${crypto.randomUUID()}`;

const openaiPrompt = {
  slug: "remote",
  model: "openai:gpt-4o-mini",
  inputs: { text: { type: "string" } },
  messages: [{ role: "user", content: "{{text}}" }],
};

beforeAll(() => {
  provider = startFakeOpenAI({ type: "stream", tokens: ["should", " not", " happen"] });
});
afterAll(async () => {
  for (const server of servers) await server.dispose();
  await provider?.close();
});

async function serverWith(env: Record<string, string>) {
  const server = await startServer({ env });
  servers.push(server);
  await pushPrompts(server, server.tenantId, [openaiPrompt]);
  return server;
}

const runWithEnv = async (server: TestServer, envVars: Record<string, string>) => {
  const response = await api(server, "/api/v1/prompts/remote/latest/runs", {
    method: "POST",
    json: { inputs: { text: "hello" }, envVars },
  });
  expect(response.status).toBe(202);
  const { id } = (await response.json()) as { id: string };
  return waitForRun(server, id);
};

describe("private targets are refused for tenant-supplied URLs", () => {
  test("webhooks on loopback, in any spelling, and on other private ranges are refused at registration", async () => {
    const server = await serverWith({ PROMPTRUN_ALLOW_PRIVATE_URLS: "false" });
    const port = new URL(provider.url).port;
    for (const url of [
      `http://127.0.0.1:${port}/hook`,
      `http://localhost:${port}/hook`,
      `http://2130706433:${port}/hook`,
      `http://0x7f.1:${port}/hook`,
      `http://[::1]:${port}/hook`,
      `http://[::ffff:127.0.0.1]:${port}/hook`,
      "http://10.1.2.3/hook",
      "http://169.254.169.254/latest/meta-data",
      "http://100.64.0.1/hook",
      "http://0.0.0.0/hook",
    ]) {
      const added = await server.cli<{ error?: string }>(
        "webhooks",
        "add",
        server.tenantId,
        "production",
        url,
      );
      expect(added.code).not.toBe(0);
      expect(`${url}: ${added.json.error}`).toContain("private or loopback address");
    }
  });

  test("a run whose envVars point a provider at a private address fails with a clear error and sends nothing", async () => {
    const server = await serverWith({ PROMPTRUN_ALLOW_PRIVATE_URLS: "false", PROMPTRUN_MAX_ATTEMPTS: "1" });
    const before = provider.requests.length;
    const run = await runWithEnv(server, {
      OPENAI_BASE_URL: provider.baseUrl,
      OPENAI_API_KEY: "sk-tenant-own",
    });
    expect(run.status).toBe("failed");
    expect(String(run.error)).toMatch(/private|not allowed|refused/i);
    expect(provider.requests.length).toBe(before);
  });

  test("the server's own key never goes to a base URL a tenant supplied", async () => {
    const server = await serverWith({
      PROMPTRUN_ALLOW_PRIVATE_URLS: "true",
      PROMPTRUN_MAX_ATTEMPTS: "1",
      OPENAI_API_KEY: SERVER_KEY,
    });
    const before = provider.requests.length;
    // The tenant redirects the provider but brings no key of its own.
    const run = await runWithEnv(server, { OPENAI_BASE_URL: provider.baseUrl });
    expect(run.status).toBe("failed");
    expect(String(run.error)).toContain("OPENAI_API_KEY");
    const sent = provider.requests.slice(before);
    expect(sent.every((request) => !JSON.stringify(request.headers).includes(SERVER_KEY))).toBe(true);
    expect(server.logs()).not.toContain(SERVER_KEY);
  });
});
