/**
 * The operator CLI as a child process on a real SQLite file: exit codes, usage, and errors that
 * name what is wrong (an unknown tenant, a private URL and the setting that allows it).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

// Each case spawns `bun` (about a second on a busy 2-core machine).
setDefaultTimeout(60_000);

const CLI = resolve(import.meta.dir, "cli.ts");
const UNKNOWN_TENANT = "01900000-0000-7000-8000-000000000000";

let dataDir: string;
let env: Record<string, string>;

async function cli(args: string[], extraEnv: Record<string, string> = {}) {
  const child = Bun.spawn(["bun", CLI, ...args], {
    env: { ...env, ...extraEnv },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { stdout, stderr, code };
}

async function cliJson<T = Record<string, unknown>>(args: string[], extraEnv: Record<string, string> = {}) {
  const result = await cli([...args, "--json"], extraEnv);
  return { ...result, json: JSON.parse(result.stdout) as T };
}

let tenantId: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "promptrun-cli-"));
  env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    DATABASE_URL: `file:${join(dataDir, "promptrun.db")}`,
    LOG_LEVEL: "warn",
  };
  const created = await cliJson<{ tenant: { id: string } }>(["tenants", "create", "acme"]);
  expect(created.code).toBe(0);
  tenantId = created.json.tenant.id;
});

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("promptrun CLI", () => {
  test("no command prints the usage on stderr and exits 2", async () => {
    const result = await cli([]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Usage: promptrun <command>");
    expect(result.stdout).toBe("");
  });

  test("--help prints the usage on stdout and exits 0", async () => {
    const result = await cli(["--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Usage: promptrun <command>");
  });

  test("a group without its action is a usage error", async () => {
    const result = await cliJson(["tenants"]);
    expect(result.code).toBe(2);
    expect(result.json).toEqual({ error: "unknown command 'tenants'" });
  });

  test("a loopback webhook URL names PROMPTRUN_ALLOW_PRIVATE_URLS", async () => {
    const result = await cli(["webhooks", "add", tenantId, "production", "http://127.0.0.1:9/hook"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("private or loopback");
    expect(result.stderr).toContain("PROMPTRUN_ALLOW_PRIVATE_URLS=true");
    const json = await cliJson(["webhooks", "add", tenantId, "production", "http://127.0.0.1:9/hook"]);
    expect(json.code).toBe(1);
    expect(String(json.json.error)).toContain("PROMPTRUN_ALLOW_PRIVATE_URLS");
  });

  test.each([
    [["webhooks", "add", UNKNOWN_TENANT, "production", "https://example.com/hook"]],
    [["webhooks", "list", UNKNOWN_TENANT]],
    [["webhooks", "attempts", UNKNOWN_TENANT]],
    [["webhooks", "redeliver", UNKNOWN_TENANT, UNKNOWN_TENANT]],
    [["envs", "set", UNKNOWN_TENANT, "production", "A=1"]],
    [["envs", "list", UNKNOWN_TENANT]],
    [["keys", "create", UNKNOWN_TENANT]],
    [["prompts", "tag", "greet", "1", "stable", "--tenant", UNKNOWN_TENANT]],
    [["tenants", "subscription", UNKNOWN_TENANT, "inactive"]],
  ])("an unknown tenant is named as such: %p", async (args) => {
    const result = await cliJson(args);
    expect(result.code).toBe(1);
    expect(result.json).toEqual({ error: `tenant '${UNKNOWN_TENANT}' not found` });
  });

  test("an unknown environment of a known tenant is named as such", async () => {
    const result = await cliJson(["webhooks", "add", tenantId, "staging", "https://example.com/hook"]);
    expect(result.code).toBe(1);
    expect(result.json).toEqual({ error: "unknown environment 'staging'" });
  });

  test("bad arguments are usage errors with exit 2 and one JSON document", async () => {
    for (const args of [
      ["keys", "create"],
      ["envs", "set", tenantId, "production"],
      ["envs", "set", tenantId, "production", "NOEQUALS"],
      ["tenants", "subscription", tenantId, "paused"],
      ["webhooks", "add", tenantId, "production", "https://example.com/h", "--events", "run.bogus"],
      ["tenants", "create", "x", "--no-such-flag"],
    ]) {
      const result = await cliJson(args);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(Object.keys(result.json)).toEqual(["error"]);
    }
  });
});
