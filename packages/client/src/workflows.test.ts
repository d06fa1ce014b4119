import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { StreamEnvelope, WorkflowVersion } from "@promptrun/contract";
import { ApiError } from "./api-error.ts";
import { createPromptrunClient } from "./promptrun-client.ts";
import { type FakePromptrunServer, startFakePromptrunServer } from "./testing/fake-promptrun-server.ts";

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (caught: unknown) => caught,
  );
  if (!ApiError.isInstance(error)) throw error;
  return error;
}

describe("client.workflows (definitions)", () => {
  const seen: Array<{ method: string; path: string; query: string; body: string }> = [];
  let reply: () => Response = () => Response.json({});
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      seen.push({
        method: request.method,
        path: url.pathname,
        query: url.search,
        body: await request.text(),
      });
      return reply();
    },
  });
  afterAll(() => server.stop(true));
  const client = () => createPromptrunClient({ baseUrl: `http://127.0.0.1:${server.port}`, apiKey: "pr_k" });

  const pushed = { slug: "triage", version: 2, id: "0190c8a0-0000-7000-8000-000000000003", tags: [] };
  const version: WorkflowVersion = {
    id: "0190c8a0-0000-7000-8000-000000000003",
    slug: "triage",
    version: 2,
    description: null,
    inputs: { ticket: { type: "string" } },
    steps: [{ id: "classify", prompt: "classify@production", inputs: { text: "{{inputs.ticket}}" } }],
    output: null,
    tags: ["production"],
    createdAt: "2026-01-01T00:00:00.000Z",
    contentHash: "ab".repeat(32),
  };

  test("push POSTs the file to /workflows and returns the result", async () => {
    reply = () => Response.json({ ...pushed, created: true }, { status: 201 });
    const file = { slug: "triage", steps: [{ id: "classify", prompt: "classify" }] };
    expect(await client().workflows.push(file)).toEqual({ ...pushed, created: true });
    expect(seen.at(-1)).toEqual({
      method: "POST",
      path: "/api/v1/workflows",
      query: "",
      body: JSON.stringify(file),
    });
  });

  test("a refused push is an ApiError with the server's message", async () => {
    reply = () =>
      Response.json({ error: "triage: steps[1].when: unknown step 'x'", code: "invalid" }, { status: 400 });
    const error = await rejection(client().workflows.push({ slug: "triage", steps: [] }));
    expect(error).toMatchObject({
      status: 400,
      code: "invalid",
      message: "triage: steps[1].when: unknown step 'x'",
    });
  });

  test("list and versions send the page; get defaults to latest; tag PUTs {version}", async () => {
    const summary = {
      id: version.id,
      slug: "triage",
      description: null,
      latestVersion: 2,
      tags: { production: 2 },
      createdAt: version.createdAt,
      updatedAt: version.createdAt,
    };
    reply = () => Response.json({ items: [summary], nextCursor: "c2" });
    expect(await client().workflows.list({ cursor: "c1", limit: 10 })).toEqual({
      items: [summary],
      nextCursor: "c2",
    });
    expect(seen.at(-1)).toMatchObject({
      method: "GET",
      path: "/api/v1/workflows",
      query: "?cursor=c1&limit=10",
    });

    reply = () => Response.json({ items: [version], nextCursor: null });
    expect((await client().workflows.versions("triage", { limit: 5 })).items).toEqual([version]);
    expect(seen.at(-1)).toMatchObject({ path: "/api/v1/workflows/triage/versions", query: "?limit=5" });

    reply = () => Response.json(version);
    expect(await client().workflows.get("triage")).toEqual(version);
    expect(seen.at(-1)).toMatchObject({ method: "GET", path: "/api/v1/workflows/triage/latest" });
    await client().workflows.get("triage", 2);
    expect(seen.at(-1)?.path).toBe("/api/v1/workflows/triage/2");

    reply = () => Response.json({ ...pushed, tags: ["production"], created: false });
    expect(await client().workflows.tag("triage", "production", 2)).toMatchObject({ tags: ["production"] });
    expect(seen.at(-1)).toEqual({
      method: "PUT",
      path: "/api/v1/workflows/triage/tags/production",
      query: "",
      body: JSON.stringify({ version: 2 }),
    });
  });

  test("an answer outside the contract is an invalid_response ApiError", async () => {
    reply = () => Response.json({ ...version, steps: "none" });
    const error = await rejection(client().workflows.get("triage", "production"));
    expect(error.code).toBe("invalid_response");
    expect(seen.at(-1)?.path).toBe("/api/v1/workflows/triage/production");
  });
});

describe("client.workflowRuns", () => {
  let fake: FakePromptrunServer;
  beforeAll(() => {
    fake = startFakePromptrunServer({
      workflowScript: ({ slug }) => {
        if (slug === "broken")
          return {
            steps: [
              { id: "first", script: { tokens: ["ok"] } },
              { id: "second", script: { tokens: ["x"], fail: "provider said no" } },
              { id: "third", script: { tokens: ["never"] } },
            ],
          };
        if (slug === "slow")
          return { steps: [{ id: "slow", script: { tokens: ["a", "b"], tokenDelayMs: 500 } }] };
        return {
          steps: [
            { id: "classify", script: { tokens: ['{"category":"bug"}'], outputJson: { category: "bug" } } },
            { id: "docs", retrieve: "[1] help.md: restart it" },
            { id: "answer", script: { tokens: ["Restart ", "it."] } },
          ],
        };
      },
    });
  });
  afterAll(() => fake.stop());
  const client = () => createPromptrunClient({ baseUrl: fake.url, apiKey: fake.apiKey });

  test("create (latest by default, Idempotency-Key sent) then waitUntilEnded returns the completed run", async () => {
    const thread = crypto.randomUUID();
    const created = await client().workflowRuns.create(
      "triage",
      { inputs: { ticket: "it crashes" }, thread, metadata: { user: "u1" } },
      { idempotencyKey: "key-1" },
    );
    expect(created.thread).toBe(thread);
    expect(fake.createdWorkflowRuns.at(-1)).toMatchObject({
      slug: "triage",
      version: "latest",
      idempotencyKey: "key-1",
      body: { inputs: { ticket: "it crashes" } },
    });
    // The same key answers the first workflow run again.
    const replayed = await client().workflowRuns.create(
      "triage",
      { inputs: {} },
      { idempotencyKey: "key-1" },
    );
    expect(replayed).toEqual(created);

    const ended = await client().workflowRuns.waitUntilEnded(created.id, { intervalMs: 10 });
    expect(ended).toMatchObject({
      id: created.id,
      status: "completed",
      phase: null,
      output: "Restart it.",
      metadata: { user: "u1" },
      workflow: { slug: "triage" },
    });
    expect(ended.steps.map((step) => [step.id, step.kind, step.status])).toEqual([
      ["classify", "prompt", "completed"],
      ["docs", "retrieve", "completed"],
      ["answer", "prompt", "completed"],
    ]);
    expect(ended.steps[0]?.outputJson).toEqual({ category: "bug" });
    expect(ended.cost?.total).toBeGreaterThan(0);
    // Each prompt step is an ordinary run, linked to its workflow run, on the step's channel.
    const stepRun = await client().runs.get(ended.steps[2]!.runId!);
    expect(stepRun).toMatchObject({
      channel: "answer",
      thread,
      workflowRun: { id: created.id, step: "answer" },
    });
  });

  test("a version is sent in the path; get reads a pending run", async () => {
    const { id } = await client().workflowRuns.create("slow", { inputs: {} }, { version: 3 });
    expect(fake.createdWorkflowRuns.at(-1)).toMatchObject({ slug: "slow", version: "3" });
    const pending = await client().workflowRuns.get(id);
    expect(pending).toMatchObject({ status: "pending", output: null, cost: null, workflow: { version: 3 } });
    await client().workflowRuns.cancel(id);
  });

  test("a failed step fails the workflow run and cancels the rest", async () => {
    const { id } = await client().workflowRuns.create("broken", { inputs: {} });
    const ended = await client().workflowRuns.waitUntilEnded(id, { intervalMs: 10 });
    expect(ended).toMatchObject({ status: "failed", error: "step 'second' failed: provider said no" });
    expect(ended.steps.map((step) => step.status)).toEqual(["completed", "failed", "cancelled"]);
  });

  test("cancel ends it failed 'cancelled'; a second cancel is a conflict", async () => {
    const { id } = await client().workflowRuns.create("slow", { inputs: {} });
    const cancelled = await client().workflowRuns.cancel(id);
    expect(cancelled).toMatchObject({ status: "failed", error: "cancelled" });
    expect(cancelled.steps.every((step) => step.status === "cancelled")).toBe(true);
    const again = await rejection(client().workflowRuns.cancel(id));
    expect(again).toMatchObject({ status: 409, code: "conflict" });
  });

  test("an unknown id is not_found, at once and without polling on", async () => {
    const error = await rejection(client().workflowRuns.waitUntilEnded(crypto.randomUUID()));
    expect(error).toMatchObject({ status: 404, code: "not_found" });
  });

  test("waitUntilEnded gives up with a timeout error, and stops when its signal aborts", async () => {
    const { id } = await client().workflowRuns.create("slow", { inputs: {} });
    const timedOut = await rejection(
      client().workflowRuns.waitUntilEnded(id, { timeoutMs: 60, intervalMs: 10 }),
    );
    expect(timedOut.code).toBe("timeout");
    const controller = new AbortController();
    const waiting = client().workflowRuns.waitUntilEnded(id, { intervalMs: 10, signal: controller.signal });
    controller.abort(new Error("gave up"));
    await expect(waiting).rejects.toThrow("gave up");
    await client().workflowRuns.cancel(id);
  });

  test("list sends the filters and the page", async () => {
    const thread = crypto.randomUUID();
    const { id } = await client().workflowRuns.create("triage", { inputs: {}, thread });
    await client().workflowRuns.waitUntilEnded(id, { intervalMs: 10 });
    const page = await client().workflowRuns.list({
      workflow: "triage",
      status: "completed",
      thread,
      limit: 5,
    });
    expect(page.items.map((each) => each.id)).toEqual([id]);
    const failed = await client().workflowRuns.list({ thread, status: "failed" });
    expect(failed.items).toEqual([]);
  });

  test("the thread's subscription carries the workflow events beside the steps' run events", async () => {
    const thread = crypto.randomUUID();
    const events: StreamEnvelope[] = [];
    for await (const event of client().threads.subscribe(thread)) {
      events.push(event);
      if (event.type === "ready") await client().workflowRuns.create("triage", { inputs: {}, thread });
      if (event.type === "workflow.completed") break;
    }
    const workflowEvents = events.filter((event) => event.type.startsWith("workflow."));
    expect(workflowEvents.map((event): string => event.type)).toEqual([
      "workflow.started",
      ...Array<string>(5).fill("workflow.step"),
      "workflow.completed",
    ]);
    expect(events.some((event) => event.type === "run.completed")).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "workflow.completed", data: { output: "Restart it." } });
  });
});
