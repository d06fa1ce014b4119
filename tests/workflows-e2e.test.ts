/**
 * Workflow runs end to end through the real server (SQLite, or Postgres + Redis with
 * PROMPTRUN_E2E_DATABASE=postgres), docs/WORKFLOWS.md: prompts and workflows pushed over REST, the
 * models a wire-level fake OpenAI answering each model by its own script (so every test counts
 * its own model calls). A diamond whose middle steps are in flight at once, with summed usage and
 * cost, step runs readable as prompt runs, its thread's SSE events and a signed webhook; a skipped
 * branch; a failed step with and without continueOnError; a step paused for tool outputs; a
 * cancel in the middle; an Idempotency-Key replay; versions and tags.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Cost, type TokenUsage, threadEventSchemas, type WorkflowRun } from "@promptrun/contract";
import type { FakeReply, FakeRequest } from "@promptrun/core/testing";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";
import type { ReceivedEvent, SseConnection } from "./support/sse.ts";
import {
  answer,
  callTools,
  getRun,
  lastRole,
  lastUserText,
  type ModelRouter,
  openThreadStream,
  type Run,
  startModelRouter,
  submitToolOutputs,
  toolCall,
  waitForPause,
} from "./support/tool-runs.ts";
import { addWebhook, startWebhookReceiver } from "./support/webhook-receiver.ts";
import {
  createWorkflowRun,
  createWorkflowRunRaw,
  expectWellFormed,
  getWorkflowRun,
  jsonOutput,
  pushPromptsOverRest,
  pushWorkflow,
  refusal,
  stepOf,
  textPrompt,
  waitForWorkflowRun,
} from "./support/workflows.ts";

const DIALECT = process.env.PROMPTRUN_E2E_DATABASE ?? "sqlite";
const PRICE = { inputPerMillion: 1, cachedInputPerMillion: 0.5, outputPerMillion: 2 };
const MODELS = ["wf-a", "wf-b", "wf-c", "wf-d", "wf-plain", "wf-never", "wf-slow", "wf-broken"];
const MORE_MODELS = ["wf-broken-late", "wf-orders", "wf-hold", "wf-gate"];

const router: ModelRouter = startModelRouter();
const receiver = startWebhookReceiver();
let server: TestServer;
const streams: SseConnection[] = [];

const openai = (name: string) => `openai:${name}`;
const lookupOrder = {
  type: "function",
  name: "lookup_order",
  parameters: { type: "object", properties: { number: { type: "string" } }, required: ["number"] },
};

const prompts = () => [
  textPrompt(
    "wf-a",
    openai("wf-a"),
    jsonOutput("topic", { topic: { type: "string" }, count: { type: "integer" } }),
  ),
  textPrompt("wf-b", openai("wf-b")),
  {
    ...textPrompt("wf-c", openai("wf-c")),
    // `count` is an integer: the step fills it with a whole `{{…}}`, which keeps the value's type.
    inputs: { text: { type: "string" }, count: { type: "integer" } },
    messages: [{ role: "user", content: "{{text}} x{{count}}" }],
  },
  textPrompt("wf-d", openai("wf-d")),
  textPrompt("wf-plain", openai("wf-plain")),
  textPrompt("wf-never", openai("wf-never")),
  textPrompt("wf-slow", openai("wf-slow")),
  textPrompt("wf-broken", openai("wf-broken")),
  textPrompt("wf-broken-late", openai("wf-broken-late")),
  textPrompt("wf-orders", openai("wf-orders"), { tools: [lookupOrder] }),
  textPrompt("wf-hold", openai("wf-hold")),
  textPrompt("wf-gate", openai("wf-gate"), jsonOutput("gate", { category: { type: "string" } })),
];

/** Usage per diamond model, all different so that a sum cannot come out right by accident. */
const USAGE = {
  "wf-a": { input: 100, output: 10 },
  "wf-b": { input: 120, output: 12 },
  "wf-c": { input: 130, output: 13 },
  "wf-d": { input: 140, output: 14 },
} as const;

/** Resolves once `check` holds (or after 10 s, so a broken engine fails an assertion, not the suite's timeout). */
const until = async (check: () => boolean) => {
  const deadline = Date.now() + 10_000;
  while (!check() && Date.now() < deadline) await Bun.sleep(10);
};
const bothMiddleStepsAsked = () =>
  until(() => router.requestsFor("wf-b").length > 0 && router.requestsFor("wf-c").length > 0);

router.script("wf-a", () => answer('{"topic":"late parcel","count":2}', USAGE["wf-a"]));
// b and c hold their answers until both requests are in: run one after the other, neither finishes.
router.script("wf-b", (request) => ({
  ...answer(`B saw ${lastUserText(request)}`, USAGE["wf-b"]),
  holdBeforeFinish: bothMiddleStepsAsked(),
}));
router.script("wf-c", (request) => ({
  ...answer(`C saw ${lastUserText(request)}`, USAGE["wf-c"]),
  holdBeforeFinish: bothMiddleStepsAsked(),
}));
router.script("wf-d", (request) => answer(`D: ${lastUserText(request)}`, USAGE["wf-d"]));
router.script("wf-plain", (request) => answer(`echo: ${lastUserText(request)}`));
router.script("wf-never", () => answer("this model must never be called"));
/** Streams one token, then stays silent until the server hangs up (cancel, shutdown). */
const hanging: FakeReply = { type: "stream", tokens: ["thinking "], hangAfterTokens: 1 };
router.script("wf-slow", () => hanging);
router.script("wf-hold", () => hanging);
router.script("wf-broken", () => ({ type: "error", status: 400, message: "the model refused this request" }));
// Fails only once wf-slow's request is in flight, so the failure has a running step to cancel.
router.script("wf-broken-late", async () => {
  await until(() => router.requestsFor("wf-slow").length > 0);
  return { type: "error", status: 400, message: "the model refused this request" };
});
router.script("wf-orders", (request: FakeRequest) =>
  lastRole(request) === "tool"
    ? answer(`Order status: ${String(request.toolResults.at(-1)?.content)}`)
    : callTools([toolCall("call_1", "lookup_order", { number: "A-7" })]),
);
router.script("wf-gate", () => answer('{"category":"routine"}'));

beforeAll(async () => {
  server = await startServer({
    env: {
      OPENAI_API_KEY: "sk-test-openai",
      OPENAI_BASE_URL: router.baseUrl,
      PROMPTRUN_PRICES: JSON.stringify(
        Object.fromEntries([...MODELS, ...MORE_MODELS].map((model) => [openai(model), PRICE])),
      ),
      PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: "0.2,0.2",
    },
  });
  await pushPromptsOverRest(server, prompts());
  await addWebhook(server, server.tenantId, receiver, ["workflow.completed", "workflow.failed"]);
});
afterAll(async () => {
  for (const stream of streams) stream.close();
  await server?.dispose();
  await router.close();
  receiver.stop();
});

const stream = async (thread: string) => {
  const opened = await openThreadStream(server, thread);
  streams.push(opened);
  return opened;
};

const round = (value: number) => Math.round(value * 1e12) / 1e12;
const priceOf = (usage: { input: number; output: number }) =>
  round((usage.input * PRICE.inputPerMillion + usage.output * PRICE.outputPerMillion) / 1e6);
const sumUsage = (usages: TokenUsage[]): TokenUsage => {
  const keys = ["input", "inputCached", "output", "reasoning", "total"] as const;
  return Object.fromEntries(
    keys.map((key) => [key, usages.reduce((sum, usage) => sum + usage[key], 0)]),
  ) as TokenUsage;
};

/** The workflow.* events of one workflow run, and each step's statuses in arrival order. */
const workflowEventsOf = (events: ReceivedEvent[], workflowRunId: string) =>
  events.filter((event) => event.event.startsWith("workflow.") && event.data.workflowRunId === workflowRunId);
const stepStatuses = (events: ReceivedEvent[], workflowRunId: string, step: string) =>
  workflowEventsOf(events, workflowRunId)
    .filter((event) => event.event === "workflow.step" && event.data.step === step)
    .map((event) => event.data.status);
const indexOf = (events: ReceivedEvent[], predicate: (event: ReceivedEvent) => boolean) =>
  events.findIndex(predicate);

const DIAMOND = {
  slug: "diamond",
  description: "a → (b, c) → d",
  inputs: { ticket: { type: "string" } },
  steps: [
    { id: "a", prompt: "wf-a", inputs: { text: "Topic of: {{inputs.ticket}}" } },
    { id: "b", prompt: "wf-b", inputs: { text: "{{steps.a.outputJson.topic}}" } },
    {
      id: "c",
      prompt: "wf-c@latest",
      inputs: { text: "{{steps.a.outputJson.topic}}", count: "{{steps.a.outputJson.count}}" },
    },
    {
      id: "d",
      prompt: "wf-d",
      inputs: { text: "b=[{{steps.b.output}}] c=[{{steps.c.output}}] topic={{steps.a.outputJson.topic}}" },
    },
  ],
  output: "{{steps.d.output}}",
};

describe(`workflow runs (${DIALECT})`, () => {
  // long test: one diamond run proves the graph, usage, step runs, SSE and the webhook together.
  test("a diamond a → (b, c) → d: b and c in flight at once; usage and cost are the steps' sums; step runs are prompt runs; SSE and webhook", async () => {
    await pushWorkflow(server, DIAMOND);
    const thread = crypto.randomUUID();
    const events = await stream(thread);
    const metadata = { order: "42" };
    const { id } = await createWorkflowRun(server, "diamond", {
      inputs: { ticket: "my parcel is late" },
      thread,
      priority: "onsite",
      metadata,
    });
    const run = await waitForWorkflowRun(server, id);
    expect(run).toMatchObject({
      id,
      status: "completed",
      phase: null,
      error: null,
      thread,
      priority: "onsite",
      environment: "production",
      metadata,
      inputs: { ticket: "my parcel is late" },
      workflow: { slug: "diamond", version: 1 },
      output: "D: b=[B saw late parcel] c=[C saw late parcel x2] topic=late parcel",
      outputJson: null,
    });
    expect(run.steps.map((step) => [step.id, step.kind, step.status])).toEqual([
      ["a", "prompt", "completed"],
      ["b", "prompt", "completed"],
      ["c", "prompt", "completed"],
      ["d", "prompt", "completed"],
    ]);
    expect(stepOf(run, "a")).toMatchObject({
      output: '{"topic":"late parcel","count":2}',
      outputJson: { topic: "late parcel", count: 2 },
      error: null,
    });

    // Every step is an ordinary prompt run on the workflow's thread, on the channel named after it.
    const stepRuns: Record<string, Run> = {};
    for (const step of run.steps) {
      expect(step.runId).toEqual(expect.any(String));
      const stepRun = await getRun(server, step.runId as string);
      stepRuns[step.id] = stepRun;
      expect(stepRun).toMatchObject({
        status: "completed",
        thread,
        channel: step.id,
        priority: "onsite",
        environment: "production",
        metadata,
        workflowRun: { id, step: step.id },
        output: step.output,
        prompt: { slug: `wf-${step.id}` },
      });
      expect(Date.parse(step.startedAt as string)).toBeLessThanOrEqual(Date.parse(step.finishedAt as string));
    }
    expect(stepRuns.c!.output).toBe("C saw late parcel x2");

    // The graph's order: a before b and c, d after both.
    const time = (step: string, edge: "startedAt" | "finishedAt") =>
      Date.parse(stepOf(run, step)[edge] as string);
    expect(time("b", "startedAt")).toBeGreaterThanOrEqual(time("a", "finishedAt"));
    expect(time("c", "startedAt")).toBeGreaterThanOrEqual(time("a", "finishedAt"));
    expect(time("d", "startedAt")).toBeGreaterThanOrEqual(
      Math.max(time("b", "finishedAt"), time("c", "finishedAt")),
    );
    // b and c overlap: each started before the other finished (as stored and as the upstream saw it).
    expect(time("b", "startedAt")).toBeLessThan(time("c", "finishedAt"));
    expect(time("c", "startedAt")).toBeLessThan(time("b", "finishedAt"));
    const [bRequest] = router.requestsFor("wf-b");
    const [cRequest] = router.requestsFor("wf-c");
    const bStream = await router.provider.waitForStreamEnd(bRequest!.index);
    const cStream = await router.provider.waitForStreamEnd(cRequest!.index);
    expect(bRequest!.receivedAt).toBeLessThanOrEqual(cStream.endedAt as number);
    expect(cRequest!.receivedAt).toBeLessThanOrEqual(bStream.endedAt as number);
    expect([bStream.outcome, cStream.outcome]).toEqual(["completed", "completed"]);
    // Each model was asked once, with what the templates made of the earlier steps.
    for (const model of ["wf-a", "wf-b", "wf-c", "wf-d"]) expect(router.requestsFor(model)).toHaveLength(1);
    expect(lastUserText(router.requestsFor("wf-a")[0]!)).toBe("Topic of: my parcel is late");
    expect(lastUserText(bRequest!)).toBe("late parcel");
    expect(lastUserText(router.requestsFor("wf-d")[0]!)).toBe(
      "b=[B saw late parcel] c=[C saw late parcel x2] topic=late parcel",
    );

    // Usage and cost: the sums over the step runs.
    const usages = Object.values(stepRuns).map((stepRun) => stepRun.tokenUsage as TokenUsage);
    expect(run.tokenUsage).toEqual(sumUsage(usages));
    expect(run.tokenUsage).toEqual({ input: 490, inputCached: 0, output: 49, reasoning: 0, total: 539 });
    const cost = run.cost as Cost;
    const stepCosts = Object.values(stepRuns).map((stepRun) => (stepRun.cost as Cost).total);
    expect(round(cost.total)).toBe(round(stepCosts.reduce((sum, value) => sum + value, 0)));
    expect(round(cost.total)).toBe(
      round(Object.values(USAGE).reduce((sum, usage) => sum + priceOf(usage), 0)),
    );
    expect(round(cost.success.total)).toBe(round(cost.total));
    expect(cost.retries.total).toBe(0);

    // SSE: workflow.started, the steps' changes, workflow.completed, beside the steps' run.* events.
    await events.waitFor((event) => event.event === "workflow.completed" && event.data.workflowRunId === id);
    const received = events.events;
    const workflowEvents = workflowEventsOf(received, id);
    for (const event of workflowEvents) {
      const schema = threadEventSchemas[event.event as keyof typeof threadEventSchemas];
      const parsed = schema.safeParse(event.data);
      expect(parsed.success, `${event.event}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
    }
    expect(workflowEvents[0]).toMatchObject({
      event: "workflow.started",
      data: { workflowRunId: id, workflow: { slug: "diamond", version: 1 } },
    });
    expect(workflowEvents.at(-1)).toMatchObject({
      event: "workflow.completed",
      data: { workflowRunId: id, output: run.output, tokenUsage: run.tokenUsage, finishedAt: run.finishedAt },
    });
    expect(workflowEvents.filter((event) => event.event === "workflow.started")).toHaveLength(1);
    expect(workflowEvents.filter((event) => event.event === "workflow.completed")).toHaveLength(1);
    expect(workflowEvents.filter((event) => event.event === "workflow.failed")).toHaveLength(0);
    for (const step of run.steps) {
      expect(stepStatuses(received, id, step.id)).toEqual(["running", "completed"]);
      const changes = workflowEvents.filter(
        (event) => event.event === "workflow.step" && event.data.step === step.id,
      );
      expect(changes.map((event) => event.data.runId)).toEqual([step.runId, step.runId]);
    }
    const stepEvent = (step: string, status: string) =>
      indexOf(
        received,
        (event) =>
          event.event === "workflow.step" &&
          event.data.workflowRunId === id &&
          event.data.step === step &&
          event.data.status === status,
      );
    // b and c were both running before either completed; d started after both completed.
    expect(Math.max(stepEvent("b", "running"), stepEvent("c", "running"))).toBeLessThan(
      Math.min(stepEvent("b", "completed"), stepEvent("c", "completed")),
    );
    expect(stepEvent("d", "running")).toBeGreaterThan(
      Math.max(stepEvent("b", "completed"), stepEvent("c", "completed")),
    );
    const stepRunIds = new Set(run.steps.map((step) => step.runId));
    const runEvents = received.filter(
      (event) => event.event.startsWith("run.") && stepRunIds.has(event.data.runId as string),
    );
    expect(runEvents.filter((event) => event.event === "run.completed")).toHaveLength(4);
    const started = indexOf(
      received,
      (event) => event.event === "workflow.started" && event.data.workflowRunId === id,
    );
    const completed = indexOf(
      received,
      (event) => event.event === "workflow.completed" && event.data.workflowRunId === id,
    );
    for (const event of runEvents) {
      expect(received.indexOf(event)).toBeGreaterThan(started);
      expect(received.indexOf(event)).toBeLessThan(completed);
    }

    // The webhook: workflow.completed, signed, with the workflow run as data, once.
    const deliveriesOf = () => receiver.received.filter((delivery) => delivery.payload.data.id === id);
    await until(() => deliveriesOf().length > 0);
    await Bun.sleep(500);
    const deliveries = deliveriesOf();
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ verified: true, payload: { type: "workflow.completed" } });
    const delivered = expectWellFormed(deliveries[0]!.payload.data);
    expect(delivered).toEqual(await getWorkflowRun(server, id));
  });

  test("a false `when` skips its step, and the step that needs its output is skipped too; the others run", async () => {
    await pushWorkflow(server, {
      slug: "skipping",
      inputs: { ticket: { type: "string" } },
      steps: [
        { id: "gate", prompt: "wf-gate", inputs: { text: "{{inputs.ticket}}" } },
        {
          id: "escalate",
          prompt: "wf-never",
          when: "steps.gate.outputJson.category == 'urgent'",
          inputs: { text: "{{inputs.ticket}}" },
        },
        { id: "notify", prompt: "wf-never", inputs: { text: "escalated: {{steps.escalate.output}}" } },
        { id: "reply", prompt: "wf-plain", inputs: { text: "{{steps.gate.outputJson.category}} reply" } },
      ],
    });
    const neverBefore = router.requestsFor("wf-never").length;
    const { id } = await createWorkflowRun(server, "skipping", { inputs: { ticket: "printer jams" } });
    const run = await waitForWorkflowRun(server, id);
    expect(run.steps.map((step) => [step.id, step.status, step.runId === null])).toEqual([
      ["gate", "completed", false],
      ["escalate", "skipped", true],
      ["notify", "skipped", true],
      ["reply", "completed", false],
    ]);
    for (const id of ["escalate", "notify"]) {
      expect(stepOf(run, id)).toMatchObject({ output: null, outputJson: null, error: null });
    }
    // No output template: the output of the last step (in file order) that completed.
    expect(run).toMatchObject({ status: "completed", output: "echo: routine reply", error: null });
    expect(router.requestsFor("wf-never").length).toBe(neverBefore);
  });

  test("a failed step fails the workflow, naming the step; the running and waiting steps are cancelled", async () => {
    await pushWorkflow(server, {
      slug: "failing",
      inputs: { ticket: { type: "string" } },
      steps: [
        { id: "slow", prompt: "wf-slow", inputs: { text: "{{inputs.ticket}}" } },
        { id: "broken", prompt: "wf-broken-late", inputs: { text: "{{inputs.ticket}}" } },
        { id: "after", prompt: "wf-never", inputs: { text: "{{steps.broken.output}}" } },
      ],
    });
    const neverBefore = router.requestsFor("wf-never").length;
    const { id } = await createWorkflowRun(server, "failing", { inputs: { ticket: "help" } });
    const run = await waitForWorkflowRun(server, id);
    expect(run.status).toBe("failed");
    expect(run.error).toStartWith("step 'broken' failed: ");
    expect(run.output).toBeNull();
    expect(run.steps.map((step) => [step.id, step.status])).toEqual([
      ["slow", "cancelled"],
      ["broken", "failed"],
      ["after", "cancelled"],
    ]);
    expect(stepOf(run, "after").runId).toBeNull();
    const broken = await getRun(server, stepOf(run, "broken").runId as string);
    expect(broken).toMatchObject({ status: "failed", workflowRun: { id, step: "broken" } });
    expect(run.error).toBe(`step 'broken' failed: ${broken.error}`);
    // The step that was running is cancelled through the engine: its run fails "cancelled", its call is dropped.
    const slow = await waitForRun(server, stepOf(run, "slow").runId as string);
    expect(slow).toMatchObject({ status: "failed", error: "cancelled", workflowRun: { id, step: "slow" } });
    const slowRequest = router.requestsFor("wf-slow").at(-1)!;
    expect((await router.provider.waitForStreamEnd(slowRequest.index)).outcome).toBe("client-closed");
    expect(router.requestsFor("wf-never").length).toBe(neverBefore);

    await until(() => receiver.received.some((delivery) => delivery.payload.data.id === id));
    const failedDelivery = receiver.received.find((delivery) => delivery.payload.data.id === id)!;
    expect(failedDelivery).toMatchObject({ verified: true, payload: { type: "workflow.failed" } });
  });

  test("with continueOnError the workflow completes; the failed step's output is null and renders empty", async () => {
    await pushWorkflow(server, {
      slug: "tolerant",
      steps: [
        { id: "flaky", prompt: "wf-broken", inputs: { text: "try" }, continueOnError: true },
        {
          id: "next",
          prompt: "wf-plain",
          inputs: { text: "got [{{steps.flaky.output}}] status={{steps.flaky.status}}" },
        },
      ],
      output: "{{steps.next.output}}",
    });
    const { id } = await createWorkflowRun(server, "tolerant", { inputs: {} });
    const run = await waitForWorkflowRun(server, id);
    expect(run).toMatchObject({ status: "completed", error: null, output: "echo: got [] status=failed" });
    expect(stepOf(run, "flaky")).toMatchObject({ status: "failed", output: null, outputJson: null });
    expect(stepOf(run, "flaky").error).toEqual(expect.any(String));
    expect(stepOf(run, "next").status).toBe("completed");
    const flaky = await getRun(server, stepOf(run, "flaky").runId as string);
    expect(flaky).toMatchObject({ status: "failed", workflowRun: { id, step: "flaky" } });
  });

  test("a step waiting for tool outputs puts the workflow in requires_action; outputs at the step's run complete it", async () => {
    await pushWorkflow(server, {
      slug: "orders",
      inputs: { order: { type: "string" } },
      steps: [
        { id: "lookup", prompt: "wf-orders", inputs: { text: "Where is {{inputs.order}}?" } },
        { id: "reply", prompt: "wf-plain", inputs: { text: "{{steps.lookup.output}}" } },
      ],
    });
    const { id } = await createWorkflowRun(server, "orders", { inputs: { order: "A-7" } });
    const waiting = await waitForWorkflowRun(
      server,
      id,
      (run) => run.phase === "requires_action" || run.status !== "pending",
      "required action",
    );
    expect(waiting).toMatchObject({ status: "pending", phase: "requires_action", output: null });
    expect(stepOf(waiting, "lookup").status).toBe("running");
    expect(stepOf(waiting, "reply")).toMatchObject({ status: "pending", runId: null });
    const stepRunId = stepOf(waiting, "lookup").runId as string;
    const paused = await waitForPause(server, stepRunId);
    expect(paused).toMatchObject({ workflowRun: { id, step: "lookup" }, channel: "lookup" });

    const submitted = await submitToolOutputs(server, stepRunId, [
      { toolCallId: "call_1", output: "shipped" },
    ]);
    expect(submitted.status).toBe(202);
    const run = await waitForWorkflowRun(server, id);
    expect(run).toMatchObject({ status: "completed", output: "echo: Order status: shipped", phase: null });
    expect(router.requestsFor("wf-orders").at(-1)!.toolResults).toEqual([
      { toolCallId: "call_1", content: "shipped" },
    ]);
  });

  test("cancel in the middle: 200, the workflow fails `cancelled`, its unfinished steps are cancelled; a second cancel is 409", async () => {
    await pushWorkflow(server, {
      slug: "cancellable",
      inputs: { ticket: { type: "string" } },
      steps: [
        { id: "first", prompt: "wf-plain", inputs: { text: "{{inputs.ticket}}" } },
        { id: "held", prompt: "wf-hold", inputs: { text: "{{steps.first.output}}" } },
        { id: "later", prompt: "wf-never", inputs: { text: "{{steps.held.output}}" } },
      ],
    });
    const neverBefore = router.requestsFor("wf-never").length;
    const holdBefore = router.requestsFor("wf-hold").length;
    const { id } = await createWorkflowRun(server, "cancellable", { inputs: { ticket: "stop me" } });
    await until(() => router.requestsFor("wf-hold").length > holdBefore);
    const running = await waitForWorkflowRun(
      server,
      id,
      (run) => stepOf(run, "held").status === "running",
      "held running",
    );
    expect(running).toMatchObject({ status: "pending", phase: "running" });

    const cancelled = await api(server, `/api/v1/workflowruns/${id}/cancel`, { method: "POST" });
    expect(cancelled.status, await cancelled.clone().text()).toBe(200);
    const answered = expectWellFormed(await cancelled.json());
    expect(answered).toMatchObject({ id, status: "failed", error: "cancelled", phase: null, output: null });
    expect(answered.steps.map((step) => [step.id, step.status])).toEqual([
      ["first", "completed"],
      ["held", "cancelled"],
      ["later", "cancelled"],
    ]);
    const heldRun = await waitForRun(server, stepOf(answered, "held").runId as string);
    expect(heldRun).toMatchObject({ status: "failed", error: "cancelled" });
    const heldRequest = router.requestsFor("wf-hold").at(-1)!;
    expect((await router.provider.waitForStreamEnd(heldRequest.index)).outcome).toBe("client-closed");

    const again = await api(server, `/api/v1/workflowruns/${id}/cancel`, { method: "POST" });
    expect((await refusal(again)).status).toBe(409);
    await Bun.sleep(300);
    const after: WorkflowRun = await getWorkflowRun(server, id);
    expect(after).toEqual(answered);
    expect(router.requestsFor("wf-never").length).toBe(neverBefore);
  });

  test("Idempotency-Key: a retried create replays the 202 and starts nothing; the key with another body is a 409", async () => {
    await pushWorkflow(server, {
      slug: "idempotent",
      inputs: { ticket: { type: "string" } },
      steps: [{ id: "only", prompt: "wf-plain", inputs: { text: "{{inputs.ticket}}" } }],
    });
    const key = `wf-${crypto.randomUUID()}`;
    const thread = crypto.randomUUID();
    const body = { inputs: { ticket: "once" }, thread };
    const first = await createWorkflowRunRaw(server, "idempotent", body, { idempotencyKey: key });
    expect(first.status).toBe(202);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const original = await first.json();
    const replay = await createWorkflowRunRaw(
      server,
      "idempotent",
      { thread, inputs: { ticket: "once" } },
      {
        idempotencyKey: key,
      },
    );
    expect(replay.status).toBe(202);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.json()).toEqual(original);
    const conflict = await createWorkflowRunRaw(
      server,
      "idempotent",
      { inputs: { ticket: "twice" }, thread },
      {
        idempotencyKey: key,
      },
    );
    const refused = await refusal(conflict);
    expect(refused.status).toBe(409);
    expect(refused.error).toContain("Idempotency-Key");

    await waitForWorkflowRun(server, (original as { id: string }).id);
    const listed = await api(server, `/api/v1/workflowruns?thread=${thread}`);
    expect(listed.status).toBe(200);
    const page = (await listed.json()) as { items: unknown[] };
    expect(page.items).toHaveLength(1);
    expectWellFormed(page.items[0]);
  });

  test("versions and tags: an identical push is 200 and creates nothing; a tag pins the version a run uses", async () => {
    const file = (word: string) => ({
      slug: "versioned",
      inputs: { ticket: { type: "string" } },
      steps: [{ id: "only", prompt: "wf-plain", inputs: { text: `${word} {{inputs.ticket}}` } }],
    });
    const v1 = await pushWorkflow(server, file("one"));
    expect(v1).toMatchObject({ slug: "versioned", version: 1, created: true });
    const same = await pushWorkflow(server, file("one"));
    expect(same).toMatchObject({ version: 1, created: false, id: v1.id });
    const v2 = await pushWorkflow(server, file("two"));
    expect(v2).toMatchObject({ version: 2, created: true });

    const tagged = await api(server, "/api/v1/workflows/versioned/tags/stable", {
      method: "PUT",
      json: { version: 1 },
    });
    expect(tagged.status, await tagged.clone().text()).toBe(200);
    expect(await tagged.json()).toMatchObject({ slug: "versioned", version: 1, id: v1.id });
    const stable = await api(server, "/api/v1/workflows/versioned/stable");
    expect(stable.status).toBe(200);
    expect(await stable.json()).toMatchObject({ id: v1.id, version: 1, tags: ["stable"] });
    const versions = await api(server, "/api/v1/workflows/versioned/versions");
    expect(
      ((await versions.json()) as { items: Array<{ version: number }> }).items.map((item) => item.version),
    ).toEqual([2, 1]);
    const list = (await (await api(server, "/api/v1/workflows")).json()) as {
      items: Array<Record<string, unknown>>;
    };
    expect(list.items.find((item) => item.slug === "versioned")).toMatchObject({
      latestVersion: 2,
      tags: { stable: 1 },
    });

    const byTag = await createWorkflowRun(
      server,
      "versioned",
      { inputs: { ticket: "hi" } },
      { version: "stable" },
    );
    const latest = await createWorkflowRun(server, "versioned", { inputs: { ticket: "hi" } });
    expect(await waitForWorkflowRun(server, byTag.id)).toMatchObject({
      workflow: { slug: "versioned", version: 1, id: v1.id },
      output: "echo: one hi",
    });
    expect(await waitForWorkflowRun(server, latest.id)).toMatchObject({
      workflow: { slug: "versioned", version: 2, id: v2.id },
      output: "echo: two hi",
    });
    const runs = (await (await api(server, "/api/v1/workflowruns?workflow=versioned")).json()) as {
      items: Array<{ id: string }>;
    };
    expect(runs.items.map((item) => item.id)).toEqual([latest.id, byTag.id]);
  });
});
