/**
 * Hostile workflows through the real server (SQLite, or Postgres + Redis with
 * PROMPTRUN_E2E_DATABASE=postgres), docs/WORKFLOWS.md "Push checks" and "Limits": files refused at
 * push with a 400 that names the problem (and nothing stored), expressions that would reach
 * globals or cost without bound, another tenant's prompts and runs (never revealed), and the
 * create-run error rules on workflow runs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTenant, type Tenant } from "./hardening/support.ts";
import { api, startServer, type TestServer } from "./support/server.ts";
import {
  createWorkflowRun,
  createWorkflowRunRaw,
  pushPromptsOverRest,
  pushWorkflow,
  pushWorkflowRaw,
  refusal,
  textPrompt,
  waitForWorkflowRun,
} from "./support/workflows.ts";

const DIALECT = process.env.PROMPTRUN_E2E_DATABASE ?? "sqlite";

let server: TestServer;
let other: Tenant;
let otherCaller: { url: string; apiKey: string };

beforeAll(async () => {
  server = await startServer();
  other = await createTenant(server, "other");
  otherCaller = { url: server.url, apiKey: other.apiKey };
  await pushPromptsOverRest(server, [textPrompt("echo", "dev:echo")]);
  // Only the other tenant has `their-secret-prompt`.
  await pushPromptsOverRest(otherCaller, [
    textPrompt("their-secret-prompt", "dev:echo"),
    textPrompt("echo", "dev:echo"),
  ]);
  await pushWorkflow(server, {
    slug: "typed",
    inputs: { ticket: { type: "string" }, count: { type: "integer" } },
    steps: [{ id: "only", prompt: "echo", inputs: { text: "{{inputs.ticket}} {{inputs.count}}" } }],
  });
});
afterAll(async () => {
  await server?.dispose();
});

/** A one-file workflow around `steps` (and the declared inputs). */
const workflow = (slug: string, steps: unknown[], inputs: Record<string, unknown> = { ticket: {} }) => ({
  slug,
  inputs,
  steps,
});

/** Pushes `file`, expects a 400 whose message matches every pattern, and that nothing was stored. */
async function expectRefusedPush(file: { slug: string }, ...patterns: RegExp[]): Promise<string> {
  const { status, error } = await refusal(await pushWorkflowRaw(server, file));
  expect({ status, error }).toMatchObject({ status: 400 });
  for (const pattern of patterns) expect(error).toMatch(pattern);
  expect((await api(server, `/api/v1/workflows/${file.slug}/latest`)).status).toBe(404);
  return error;
}

describe(`workflow push checks (${DIALECT})`, () => {
  test("a cycle is refused, naming it", async () => {
    await expectRefusedPush(
      workflow("cyclic", [
        { id: "a", prompt: "echo", inputs: { text: "{{steps.b.output}}" } },
        { id: "b", prompt: "echo", inputs: { text: "{{steps.a.output}}" } },
      ]),
      /cycle/,
      /a → b → a/,
    );
  });

  test("a step that refers to itself is refused", async () => {
    await expectRefusedPush(
      workflow("selfish", [{ id: "a", prompt: "echo", inputs: { text: "x" }, when: "steps.a.output == ''" }]),
      /steps\[0\]/,
      /refers to itself/,
    );
  });

  test("a `when` reaching for globals does not compile", async () => {
    await expectRefusedPush(
      workflow("globals", [{ id: "a", prompt: "echo", inputs: { text: "x" }, when: "process.exit(1)" }]),
      /steps\[0\]\.when/,
    );
  });

  test("a `when` whose cost has no bound is refused: nested comprehensions, regular expressions", async () => {
    const tags = { tags: { type: "array" } };
    await expectRefusedPush(
      workflow(
        "nested",
        [
          {
            id: "a",
            prompt: "echo",
            inputs: { text: "x" },
            when: "inputs.tags.all(x, inputs.tags.exists(y, x == y))",
          },
        ],
        tags,
      ),
      /steps\[0\]\.when/,
      /nest/,
    );
    await expectRefusedPush(
      workflow("regex", [
        { id: "a", prompt: "echo", inputs: { text: "x" }, when: "inputs.ticket.matches('(a+)+$')" },
      ]),
      /steps\[0\]\.when/,
      /matches/,
    );
    await expectRefusedPush(
      workflow("too-long", [
        { id: "a", prompt: "echo", inputs: { text: "x" }, when: `inputs.ticket == '${"x".repeat(1_000)}'` },
      ]),
      /when/,
    );
  });

  test("1,000 steps are refused (at most 100)", async () => {
    const steps = Array.from({ length: 1_000 }, (_, index) => ({
      id: `s${index}`,
      prompt: "echo",
      inputs: { text: "x" },
    }));
    await expectRefusedPush(workflow("huge", steps), /at most 100 steps/);
  });

  test("another tenant's prompt reads exactly like a prompt that does not exist", async () => {
    const theirs = await expectRefusedPush(
      workflow("borrowing", [{ id: "a", prompt: "their-secret-prompt", inputs: { text: "x" } }]),
      /steps\[0\]/,
      /not found/,
    );
    const nobodys = await expectRefusedPush(
      workflow("borrowing", [{ id: "a", prompt: "nobodys-prompt-zz", inputs: { text: "x" } }]),
      /not found/,
    );
    expect(theirs.replaceAll("their-secret-prompt", "<slug>")).toBe(
      nobodys.replaceAll("nobodys-prompt-zz", "<slug>"),
    );
  });

  test("an unknown step, an undeclared input and an unfilled prompt input are refused, each named", async () => {
    await expectRefusedPush(
      workflow("unknown-step", [{ id: "a", prompt: "echo", inputs: { text: "{{steps.nope.output}}" } }]),
      /steps\[0\]\.inputs/,
      /unknown step 'nope'/,
    );
    await expectRefusedPush(
      workflow("undeclared", [{ id: "a", prompt: "echo", inputs: { text: "{{inputs.other}}" } }]),
      /steps\[0\]\.inputs/,
      /'other' is not declared/,
    );
    await expectRefusedPush(
      workflow("unfilled", [{ id: "a", prompt: "echo", inputs: {} }]),
      /steps\[0\]/,
      /\btext\b/,
    );
  });
});

describe(`workflow runs, refused (${DIALECT})`, () => {
  test("another tenant's workflow run is not found on get and cancel, exactly like an unknown id", async () => {
    await pushWorkflow(otherCaller, {
      slug: "theirs",
      steps: [{ id: "only", prompt: "echo", inputs: { text: "private" } }],
    });
    const { id } = await createWorkflowRun(otherCaller, "theirs", { inputs: {} });
    const unknown = crypto.randomUUID();
    for (const [method, suffix] of [
      ["GET", ""],
      ["POST", "/cancel"],
    ] as const) {
      const theirs = await refusal(await api(server, `/api/v1/workflowruns/${id}${suffix}`, { method }));
      const nobodys = await refusal(
        await api(server, `/api/v1/workflowruns/${unknown}${suffix}`, { method }),
      );
      expect(theirs.status).toBe(404);
      expect(theirs.error.replaceAll(id, "<id>")).toBe(nobodys.error.replaceAll(unknown, "<id>"));
    }
    // Their run went on untouched, and it is theirs to read.
    expect(await waitForWorkflowRun(otherCaller, id)).toMatchObject({
      status: "completed",
      output: "private",
    });
    const listed = (await (await api(server, "/api/v1/workflowruns?workflow=theirs")).json()) as {
      items: unknown[];
    };
    expect(listed.items).toEqual([]);
  });

  test("a create on an unknown workflow or version is 404", async () => {
    expect((await refusal(await createWorkflowRunRaw(server, "no-such-workflow", {}))).status).toBe(404);
    expect((await refusal(await createWorkflowRunRaw(server, "typed", {}, { version: "7" }))).status).toBe(
      404,
    );
    expect((await refusal(await createWorkflowRunRaw(server, "theirs", {}))).status).toBe(404);
  });

  test("malformed JSON is 400; a body over the limit is 413", async () => {
    const malformed = await api(server, "/api/v1/workflows/typed/latest/runs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"inputs": {"ticket": "x", ',
    });
    expect((await refusal(malformed)).status).toBe(400);
    const oversized = await createWorkflowRunRaw(server, "typed", {
      inputs: { ticket: "x".repeat(1_100_000), count: 1 },
    });
    expect((await refusal(oversized)).status).toBe(413);
  });

  test("inputs of the wrong type, missing or undeclared are 400 naming the input", async () => {
    for (const inputs of [
      { ticket: 42, count: 1 },
      { ticket: "x", count: "many" },
      { ticket: "x" },
      { ticket: "x", count: 1, extra: true },
    ]) {
      const { status, error } = await refusal(await createWorkflowRunRaw(server, "typed", { inputs }));
      expect({ inputs, status }).toEqual({ inputs, status: 400 });
      expect(error).toMatch(/ticket|count|extra/);
    }
    const { error } = await refusal(
      await createWorkflowRunRaw(server, "typed", { inputs: { ticket: 42, count: 1 } }),
    );
    expect(error).toContain("ticket");
  });

  test("an unknown query parameter on the list is 400 naming it", async () => {
    const { status, error } = await refusal(await api(server, "/api/v1/workflowruns?foo=1"));
    expect(status).toBe(400);
    expect(error).toContain("foo");
    expect((await refusal(await api(server, "/api/v1/workflowruns?version=1"))).status).toBe(400);
    expect((await refusal(await api(server, "/api/v1/workflowruns?status=done"))).status).toBe(400);
  });

  test("a malformed Idempotency-Key is 400; a key reused with another body is 409", async () => {
    const body = { inputs: { ticket: "x", count: 1 } };
    const malformed = await createWorkflowRunRaw(server, "typed", body, { idempotencyKey: "x".repeat(256) });
    expect((await refusal(malformed)).status).toBe(400);
    const key = `hostile-${crypto.randomUUID()}`;
    expect((await createWorkflowRunRaw(server, "typed", body, { idempotencyKey: key })).status).toBe(202);
    const reused = await refusal(
      await createWorkflowRunRaw(
        server,
        "typed",
        { inputs: { ticket: "y", count: 1 } },
        { idempotencyKey: key },
      ),
    );
    expect(reused.status).toBe(409);
    expect(reused.error).toContain("Idempotency-Key");
  });
});
