import { afterEach, describe, expect, test } from "bun:test";
import type { ThreadEvent } from "@promptrun/contract";
import { waitFor } from "../../testing/wait-for.ts";
import { startWorkflowFixture, type WorkflowFixture } from "./workflow-runs-test-fixture.ts";

let fixtures: WorkflowFixture[] = [];
const start = async (options?: Parameters<typeof startWorkflowFixture>[0]) => {
  const fixture = await startWorkflowFixture(options);
  fixtures.push(fixture);
  return fixture;
};
afterEach(async () => {
  await Promise.all(fixtures.map((fixture) => fixture.stop()));
  fixtures = [];
});

const stepEvents = (fixture: WorkflowFixture, thread: string) =>
  fixture.events
    .filter((entry) => entry.thread === thread && entry.event.type === "workflow.step")
    .map((entry) => (entry.event as Extract<ThreadEvent, { type: "workflow.step" }>).data);

describe("workflow runs", () => {
  test("a diamond runs its middle steps at once, sums the cost and publishes events in order", async () => {
    const fixture = await start();
    await fixture.pushWorkflow({
      slug: "diamond",
      inputs: { topic: { type: "string" } },
      steps: [
        { id: "a", prompt: "echo", inputs: { text: "start {{inputs.topic}}" } },
        { id: "b", prompt: "slow", inputs: { text: "b: {{steps.a.output}} one two three" } },
        { id: "c", prompt: "slow", inputs: { text: "c: {{steps.a.output}} four five six" } },
        { id: "d", prompt: "echo", inputs: { text: "{{steps.b.output}} | {{steps.c.output}}" } },
      ],
    });
    const { id, thread } = await fixture.run("diamond", { topic: "x" });
    const done = await fixture.ended(id);
    expect(done).toMatchObject({
      status: "completed",
      phase: null,
      output: "b: start x one two three | c: start x four five six",
      outputJson: null,
      error: null,
    });
    expect(done.steps.map((step) => step.status)).toEqual([
      "completed",
      "completed",
      "completed",
      "completed",
    ]);
    const [a, b, c, d] = await Promise.all(["a", "b", "c", "d"].map((step) => fixture.stepRun(done, step)));
    // b and c overlapped: each started before the other finished.
    expect(b!.startedAt!.getTime()).toBeLessThan(c!.finishedAt!.getTime());
    expect(c!.startedAt!.getTime()).toBeLessThan(b!.finishedAt!.getTime());
    for (const [run, step] of [
      [a, "a"],
      [b, "b"],
      [c, "c"],
      [d, "d"],
    ] as const) {
      expect(run).toMatchObject({ threadId: thread, channel: step, workflowRun: { id, step } });
    }
    const runs = [a!, b!, c!, d!];
    const total = runs.reduce((sum, run) => sum + run.cost!.total, 0);
    expect(done.cost!.total).toBeGreaterThan(0);
    expect(done.cost!.total).toBeCloseTo(total, 9);
    expect(done.tokenUsage!.total).toBe(runs.reduce((sum, run) => sum + run.tokenUsage!.total, 0));

    const types = fixture.eventTypes(thread);
    expect(types[0]).toBe("workflow.started");
    expect(types.at(-1)).toBe("workflow.completed");
    expect(types.filter((type) => type === "workflow.completed")).toHaveLength(1);
    const onThread = fixture.events.filter((entry) => entry.thread === thread).map((entry) => entry.event);
    const indexOf = (match: (event: ThreadEvent) => boolean) => onThread.findIndex(match);
    for (const run of runs) {
      const step = run.workflowRun!.step;
      const running = indexOf(
        (e) => e.type === "workflow.step" && e.data.step === step && e.data.status === "running",
      );
      const started = indexOf((e) => e.type === "run.started" && e.data.runId === run.id);
      const completed = indexOf((e) => e.type === "run.completed" && e.data.runId === run.id);
      const stepDone = indexOf(
        (e) => e.type === "workflow.step" && e.data.step === step && e.data.status === "completed",
      );
      expect(running).toBeGreaterThan(0);
      expect(running).toBeLessThan(started);
      expect(started).toBeLessThan(completed);
      expect(completed).toBeLessThan(stepDone);
    }
    expect(stepEvents(fixture, thread).map((event) => `${event.step}:${event.status}`)).toEqual([
      "a:running",
      "a:completed",
      "b:running",
      "c:running",
      expect.stringMatching(/^[bc]:completed$/),
      expect.stringMatching(/^[bc]:completed$/),
      "d:running",
      "d:completed",
    ]);
  });

  test("a false when skips the step and the steps that need it; the others run", async () => {
    const fixture = await start();
    await fixture.pushWorkflow({
      slug: "gated",
      inputs: { go: { type: "boolean" } },
      steps: [
        { id: "gate", prompt: "echo", when: "inputs.go", inputs: { text: "gate" } },
        { id: "after", prompt: "echo", inputs: { text: "after {{steps.gate.output}}" } },
        { id: "other", prompt: "echo", inputs: { text: "other" } },
      ],
      output: "[{{steps.after.output}}]",
    });
    const { id, thread } = await fixture.run("gated", { go: false });
    const done = await fixture.ended(id);
    expect(done).toMatchObject({ status: "completed", output: "[]" });
    expect(done.steps.map(({ id: step, status, runId }) => [step, status, runId === null])).toEqual([
      ["gate", "skipped", true],
      ["after", "skipped", true],
      ["other", "completed", false],
    ]);
    expect(stepEvents(fixture, thread).filter((event) => event.status === "skipped")).toHaveLength(2);

    const open = await fixture.ended((await fixture.run("gated", { go: true })).id);
    expect(open).toMatchObject({ status: "completed", output: "[after gate]" });
  });

  test("a failed step fails the workflow and cancels the steps still running or waiting", async () => {
    const fixture = await start();
    await fixture.pushWorkflow({
      slug: "fragile",
      steps: [
        { id: "long", prompt: "crawl", inputs: { text: "one two three four five six seven eight" } },
        { id: "bad", prompt: "broken", inputs: { text: "boom" } },
        { id: "next", prompt: "echo", inputs: { text: "{{steps.bad.output}}" } },
      ],
    });
    const { id, thread } = await fixture.run("fragile");
    const done = await fixture.ended(id);
    expect(done.status).toBe("failed");
    expect(done.error).toStartWith("step 'bad' failed: ");
    expect(done.output).toBeNull();
    expect(done.steps.map((step) => step.status)).toEqual(["cancelled", "failed", "cancelled"]);
    expect(done.steps[2]!.runId).toBeNull();
    const long = await fixture.stepRun(done, "long");
    await waitFor(
      async () => (await fixture.store.runs.getById(long.id))?.status === "failed",
      "long cancelled",
    );
    expect((await fixture.store.runs.getById(long.id))?.error).toBe("cancelled");
    expect(fixture.eventTypes(thread).filter((type) => type.startsWith("workflow.failed"))).toHaveLength(1);
  });

  test("continueOnError: the failed step's output is null and the workflow goes on", async () => {
    const fixture = await start();
    await fixture.pushWorkflow({
      slug: "tolerant",
      steps: [
        { id: "bad", prompt: "broken", inputs: { text: "boom" }, continueOnError: true },
        {
          id: "rescue",
          prompt: "echo",
          when: "steps.bad.status == 'failed' && steps.bad.output == null",
          inputs: { text: "rescued" },
        },
        // Inputs the prompt refuses (text must be a string): the step fails before any run.
        { id: "typed", prompt: "echo", inputs: { text: "{{ 42 }}" }, continueOnError: true },
      ],
      output: "{{steps.rescue.output}}",
    });
    const done = await fixture.ended((await fixture.run("tolerant")).id);
    expect(done).toMatchObject({ status: "completed", output: "rescued", error: null });
    expect(done.steps.map((step) => step.status)).toEqual(["failed", "completed", "failed"]);
    expect(done.steps[0]!.error).not.toBeNull();
    expect(done.steps[2]).toMatchObject({ runId: null, error: expect.stringContaining("text") });
  });

  test("cancel in the middle ends the run failed 'cancelled' and cancels its steps; a second cancel is 409", async () => {
    const fixture = await start();
    await fixture.pushWorkflow({
      slug: "cancellable",
      steps: [
        {
          id: "first",
          prompt: "crawl",
          inputs: { text: "one two three four five six seven eight nine ten" },
        },
        { id: "second", prompt: "echo", inputs: { text: "{{steps.first.output}}" } },
      ],
    });
    const { id, thread } = await fixture.run("cancellable");
    await waitFor(async () => (await fixture.get(id)).phase === "running", "running");
    const cancelled = await fixture.promptrun.services.workflowRuns.cancel(fixture.tenant.id, id);
    expect(cancelled).toMatchObject({ status: "failed", error: "cancelled", phase: null });
    expect(cancelled.steps.map((step) => step.status)).toEqual(["cancelled", "cancelled"]);
    const first = await fixture.stepRun(cancelled, "first");
    await waitFor(
      async () => (await fixture.store.runs.getById(first.id))?.status === "failed",
      "step run cancelled",
    );
    expect((await fixture.store.runs.getById(first.id))?.error).toBe("cancelled");
    await expect(fixture.promptrun.services.workflowRuns.cancel(fixture.tenant.id, id)).rejects.toMatchObject(
      {
        code: "conflict",
      },
    );
    expect(fixture.eventTypes(thread).filter((type) => type === "workflow.failed")).toHaveLength(1);
    // Another tenant's id and a malformed one read as unknown.
    await expect(fixture.promptrun.services.workflowRuns.get("someone-else", id)).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(fixture.get("nope")).rejects.toMatchObject({ code: "not_found" });
  });

  test("a step waiting for tool outputs puts the workflow in requires_action; it completes after the outputs", async () => {
    const fixture = await start();
    await fixture.pushWorkflow({
      slug: "tooling",
      steps: [
        { id: "ask", prompt: "ask", inputs: { text: '/call lookup_order {"number":"A-1"}' } },
        { id: "tell", prompt: "echo", inputs: { text: "order: {{steps.ask.output}}" } },
      ],
    });
    const { id } = await fixture.run("tooling");
    await waitFor(async () => (await fixture.get(id)).phase === "requires_action", "requires_action");
    const paused = await fixture.get(id);
    expect(paused.steps[0]).toMatchObject({ status: "running" });
    await fixture.promptrun.services.runs.submitToolOutputs(fixture.tenant, paused.steps[0]!.runId!, {
      toolOutputs: [{ toolCallId: "call_1", output: "Shipped on May 2" }],
    });
    const done = await fixture.ended(id);
    expect(done).toMatchObject({ status: "completed", output: "order: Shipped on May 2" });
  });

  test("create: 404 unknown workflow, 400 bad inputs and environment, idempotent replay, 409 on a reused key", async () => {
    const fixture = await start();
    await fixture.pushWorkflow({
      slug: "one",
      inputs: { n: { type: "number" } },
      steps: [{ id: "a", prompt: "echo", inputs: { text: "n={{inputs.n}}" } }],
    });
    const { services } = fixture.promptrun;
    const create = (body: unknown, options?: { idempotencyKey?: string }, slug = "one") =>
      services.workflowRuns.create(fixture.tenant, slug, "latest", body, options);
    await expect(create({}, undefined, "missing")).rejects.toMatchObject({ code: "not_found" });
    await expect(create({ inputs: { n: "x" } })).rejects.toMatchObject({ code: "invalid" });
    await expect(create({ inputs: { n: 1 }, environment: "nowhere" })).rejects.toMatchObject({
      code: "invalid",
    });
    await expect(create({ inputs: { n: 1 }, channel: "x" })).rejects.toMatchObject({ code: "invalid" });
    const first = await create({ inputs: { n: 1 } }, { idempotencyKey: "key-1" });
    const again = await create({ inputs: { n: 1 } }, { idempotencyKey: "key-1" });
    expect(again).toEqual({ ...first, replayed: true });
    await expect(create({ inputs: { n: 2 } }, { idempotencyKey: "key-1" })).rejects.toMatchObject({
      code: "conflict",
    });
    await expect(
      services.workflowRuns.create({ ...fixture.tenant, subscriptionActive: false }, "one", "latest", {}),
    ).rejects.toMatchObject({ code: "forbidden" });
    const done = await fixture.ended(first.id);
    expect(done.output).toBe("n=1");
    const listed = await services.workflowRuns.list(fixture.tenant.id, { workflow: "one" }, { limit: 10 });
    expect(listed.items.map((run) => run.id)).toEqual([first.id]);
    expect(
      (await services.workflowRuns.list(fixture.tenant.id, { status: "failed" }, { limit: 10 })).items,
    ).toEqual([]);
  });

  test("the tenant's pending cap holds for workflow runs: their step runs count, and a workflow run is refused at the cap", async () => {
    const fixture = await start({ maxPendingRunsPerTenant: 1 });
    await fixture.pushWorkflow({
      slug: "long",
      steps: [{ id: "a", prompt: "crawl", inputs: { text: "w ".repeat(40) } }],
    });
    const first = await fixture.run("long");
    await waitFor(
      async () => (await fixture.get(first.id)).steps[0]?.status === "running",
      "the step to start",
    );
    await expect(fixture.run("long")).rejects.toMatchObject({ code: "rate_limited" });
    const { services } = fixture.promptrun;
    await expect(
      services.runs.create(fixture.tenant, "echo", "latest", { inputs: { text: "hi" } }),
    ).rejects.toMatchObject({ code: "rate_limited" });
    await services.workflowRuns.cancel(fixture.tenant.id, first.id);
  });

  test("recovery: a new Promptrun on the same store finishes a half-done workflow without re-running a step", async () => {
    const first = await startWorkflowFixture();
    await first.pushWorkflow({
      slug: "resumable",
      steps: [
        { id: "a", prompt: "echo", inputs: { text: "alpha" } },
        { id: "b", prompt: "crawl", inputs: { text: "{{steps.a.output}} beta gamma delta epsilon" } },
        { id: "c", prompt: "echo", inputs: { text: "{{steps.b.output}} done" } },
      ],
    });
    const { id, thread } = await first.run("resumable");
    const bStarted = async () => {
      const runId = (await first.get(id)).steps[1]!.runId;
      return runId !== null && (await first.store.runs.getById(runId))?.startedAt != null;
    };
    await waitFor(bStarted, "step b executing");
    const half = await first.get(id);
    await first.promptrun.stop({ graceMs: 10 });
    const stopped = await first.get(id);
    expect(stopped.status).toBe("pending");
    expect(stopped.steps.map((step) => step.status)).toEqual(["completed", "running", "pending"]);

    const second = await start({ store: first.store, tenant: first.tenant });
    const done = await second.ended(id);
    expect(done).toMatchObject({ status: "completed", output: "alpha beta gamma delta epsilon done" });
    expect(done.steps[0]!.runId).toBe(half.steps[0]!.runId);
    expect(done.steps[1]!.runId).toBe(half.steps[1]!.runId);
    const runs = await second.store.runs.list(first.tenant.id, { threadId: thread }, { limit: 50 });
    expect(runs.items.map((run) => run.channel).sort()).toEqual(["a", "b", "c"]);
  });

  test("a retrieve step searches its knowledge base; its text and chunks feed the next step", async () => {
    const fixture = await start();
    const { knowledge } = fixture.promptrun.services;
    await knowledge.create(fixture.tenant.id, { slug: "help" });
    const { id: documentId } = await knowledge.addDocument(fixture.tenant.id, "help", {
      content: new TextEncoder().encode("Parking is in the basement."),
      filename: "policy.txt",
    });
    await waitFor(
      async () => (await knowledge.getDocument(fixture.tenant.id, "help", documentId)).status === "ready",
      "document ready",
    );
    await fixture.pushWorkflow({
      slug: "answer",
      inputs: { question: { type: "string" } },
      steps: [
        {
          id: "docs",
          retrieve: { knowledgeBase: "help", query: "{{inputs.question}}", topK: 3, mode: "keyword" },
        },
        { id: "reply", prompt: "echo", inputs: { text: "Context: {{steps.docs.text}}" } },
        { id: "nowhere", retrieve: { knowledgeBase: "missing", query: "x" }, continueOnError: true },
      ],
      output: "{{steps.docs.output}}",
    });
    const done = await fixture.ended((await fixture.run("answer", { question: "where is parking" })).id);
    expect(done.status).toBe("completed");
    expect(done.output).toBe("[1] policy.txt: Parking is in the basement.");
    expect(done.outputJson).toEqual({
      chunks: [
        expect.objectContaining({
          n: 1,
          documentId,
          filename: "policy.txt",
          text: "Parking is in the basement.",
        }),
      ],
    });
    expect(done.steps[0]).toMatchObject({ kind: "retrieve", status: "completed", runId: null });
    expect(done.steps[1]).toMatchObject({ output: "Context: [1] policy.txt: Parking is in the basement." });
    expect(done.steps[2]).toMatchObject({ status: "failed", error: "knowledge base 'missing' not found" });
  });

  test("output: one whole expression with a value that is not text gives outputJson; a failing template fails the run", async () => {
    const fixture = await start();
    await fixture.pushWorkflow({
      slug: "shaped",
      inputs: { topic: { type: "string" } },
      steps: [{ id: "a", prompt: "echo", inputs: { text: "about {{inputs.topic}}" } }],
      output: "{{ {'topic': inputs.topic, 'words': 2, 'said': steps.a.output} }}",
    });
    const done = await fixture.ended((await fixture.run("shaped", { topic: "x" })).id);
    expect(done.outputJson).toEqual({ topic: "x", words: 2, said: "about x" });
    expect(JSON.parse(done.output!)).toEqual(done.outputJson);

    await fixture.pushWorkflow({
      slug: "wrong",
      steps: [{ id: "a", prompt: "echo", inputs: { text: "hi" } }],
      output: "{{ steps.a.outputJson.missing }}",
    });
    const failed = await fixture.ended((await fixture.run("wrong")).id);
    expect(failed.status).toBe("failed");
    expect(failed.error).toStartWith("output: ");
  });
});
