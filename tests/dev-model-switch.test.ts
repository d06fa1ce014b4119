/**
 * PROMPTRUN_DEV_MODEL=false, end to end: the demo seed leaves the dev:echo prompts out (and the
 * quick start's real-model prompt in), pushing a dev:* prompt is refused naming the switch, and
 * pushing an unknown provider names the known ones.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, startServer, type TestServer } from "./support/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ env: { PROMPTRUN_DEV_MODEL: "false" } });
});
afterAll(async () => {
  await server?.dispose();
});

const pushFile = async (prompt: object) => {
  const directory = mkdtempSync(join(tmpdir(), "promptrun-dev-switch-"));
  try {
    writeFileSync(join(directory, "prompt.json"), JSON.stringify(prompt));
    return await server.cli("prompts", "push", directory, "--tenant", server.tenantId);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
};

const prompt = (model: string) => ({
  slug: "echoed",
  model,
  inputs: { text: { type: "string" } },
  messages: [{ role: "user", content: "{{text}}" }],
});

describe("PROMPTRUN_DEV_MODEL=false", () => {
  test("the demo seed skips the dev:echo prompts and keeps the others", async () => {
    const rows = await server.sql<{ slug: string }>("select slug from prompts where tenant_id = ?", [
      server.tenantId,
    ]);
    expect(rows.map((row) => row.slug)).toEqual(["summarize"]);
    // The quick start's dev prompts are absent: a run of greet is a 404, not a failing run.
    const created = await api(server, "/api/v1/prompts/greet/latest/runs", {
      method: "POST",
      json: { inputs: { name: "Ada" } },
    });
    expect(created.status).toBe(404);
  });

  test("push of a dev:* prompt and of an unknown provider is refused with a clear message", async () => {
    const dev = await pushFile(prompt("dev:echo"));
    expect(dev.code).not.toBe(0);
    expect(dev.stderr + JSON.stringify(dev.json)).toContain(
      "the development model is turned off on this server (PROMPTRUN_DEV_MODEL=false)",
    );
    const unknown = await pushFile(prompt("foo:bar"));
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr + JSON.stringify(unknown.json)).toContain(
      "unknown model provider 'foo' (known: openai, anthropic)",
    );
    expect((await pushFile(prompt("openai:gpt-4o-mini"))).code).toBe(0);
  });
});
