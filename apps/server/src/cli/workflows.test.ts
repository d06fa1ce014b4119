/**
 * `workflows push|tag|list` as a child process on a real SQLite file (like cli.test.ts), with the
 * demo prompts, the demo knowledge base and the demo workflow of the repository.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DEMO_WORKFLOWS_DIR } from "../seed-demo-workflows.ts";
import { EXAMPLE_PROMPTS_DIR } from "../server.ts";
import { describePushed, listAllWorkflows } from "./workflows.ts";

// Each case spawns `bun` (about a second on a busy 2-core machine).
setDefaultTimeout(60_000);

const CLI = resolve(import.meta.dir, "../cli.ts");
let dataDir: string;
let env: Record<string, string>;
let tenantId: string;

async function cli(args: string[]) {
  const child = Bun.spawn(["bun", CLI, ...args], { env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { stdout, stderr, code };
}

async function cliJson<T>(args: string[]) {
  const result = await cli([...args, "--json"]);
  return { ...result, json: JSON.parse(result.stdout) as T };
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "promptrun-workflows-cli-"));
  env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    DATABASE_URL: `file:${join(dataDir, "promptrun.db")}`,
    LOG_LEVEL: "warn",
  };
  const created = await cliJson<{ tenant: { id: string } }>(["tenants", "create", "acme"]);
  tenantId = created.json.tenant.id;
});

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("workflows CLI", () => {
  test("push refuses a workflow whose prompts and knowledge base the tenant does not have, naming the step", async () => {
    const result = await cli(["workflows", "push", DEMO_WORKFLOWS_DIR, "--tenant", tenantId]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "error: workflow 'support-triage': steps[0].prompt: prompt 'classify-ticket' not found\n",
    );
  });

  test("push (once its prompts and knowledge base exist), push again unchanged, tag, list", async () => {
    expect((await cli(["prompts", "push", EXAMPLE_PROMPTS_DIR, "--tenant", tenantId])).code).toBe(0);
    const kb = await cli([
      "kb",
      "create",
      "acme-docs",
      "--tenant",
      tenantId,
      "--embedding-model",
      "dev:hash",
    ]);
    expect(kb.code).toBe(0);

    const pushed = await cli(["workflows", "push", DEMO_WORKFLOWS_DIR, "--tenant", tenantId]);
    expect(pushed.stderr).toBe("");
    expect(pushed.stdout).toMatch(/^support-triage@1 created [0-9a-f-]{36} \[production\]\n$/);
    const again = await cliJson<Array<{ slug: string; version: number; created: boolean }>>([
      "workflows",
      "push",
      DEMO_WORKFLOWS_DIR,
      "--tenant",
      tenantId,
    ]);
    expect(again.json).toEqual([
      expect.objectContaining({ slug: "support-triage", version: 1, created: false }),
    ]);

    const tagged = await cli([
      "workflows",
      "tag",
      "support-triage",
      "latest",
      "stable",
      "--tenant",
      tenantId,
    ]);
    expect(tagged.stdout).toBe("support-triage@1 tagged stable\n");
    const listed = await cliJson<Array<{ slug: string; tags: Record<string, number> }>>([
      "workflows",
      "list",
      "--tenant",
      tenantId,
    ]);
    expect(listed.json.map(({ slug, tags }) => ({ slug, tags }))).toEqual([
      { slug: "support-triage", tags: { production: 1, stable: 1 } },
    ]);
  });

  test("a YAML file with a cycle is a 400 naming it; a missing tenant flag is a usage error", async () => {
    const file = join(dataDir, "loop.yaml");
    writeFileSync(
      file,
      [
        "slug: loop",
        "steps:",
        "  - { id: a, retrieve: { knowledgeBase: acme-docs, query: '{{steps.b.text}}' } }",
        "  - { id: b, retrieve: { knowledgeBase: acme-docs, query: '{{steps.a.text}}' } }",
      ].join("\n"),
    );
    const result = await cliJson<{ error: string }>(["workflows", "push", file, "--tenant", tenantId]);
    expect(result.code).toBe(1);
    expect(result.json.error).toBe("workflow 'loop': steps: cycle a → b → a");
    const usage = await cli(["workflows", "list"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("missing --tenant <id>");
  });
});

describe("workflows CLI helpers", () => {
  test("list reads every page; push results print one line each", async () => {
    const summary = (slug: string) => ({
      id: crypto.randomUUID(),
      slug,
      description: null,
      latestVersion: 1,
      tags: {},
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z",
    });
    const cursors: Array<string | null | undefined> = [];
    const pages = new Map([
      [null, { items: [summary("a"), summary("b")], nextCursor: "c1" }],
      ["c1", { items: [summary("c")], nextCursor: null }],
    ]);
    const service = {
      list: async (_tenantId: string, page: { cursor?: string | null }) => {
        cursors.push(page.cursor);
        return pages.get(page.cursor ?? null) ?? { items: [], nextCursor: null };
      },
    } as unknown as Parameters<typeof listAllWorkflows>[0];
    expect((await listAllWorkflows(service, "t")).map((item) => item.slug)).toEqual(["a", "b", "c"]);
    expect(cursors).toEqual([null, "c1"]);
    expect(
      describePushed([
        { slug: "a", version: 2, id: "id-a", tags: ["production"], created: true },
        { slug: "b", version: 1, id: "id-b", tags: [], created: false },
      ]),
    ).toBe("a@2 created id-a [production]\nb@1 unchanged id-b");
  });
});
