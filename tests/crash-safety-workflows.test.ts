/**
 * Crash safety of workflow runs (docs/WORKFLOWS.md "Storage" and "Recovery"): a workflow of three
 * prompt steps, one after the other; the real server is killed (SIGKILL) while step 2's model call
 * is in flight (the fake upstream holds it), then restarted on the same database (SQLite file, or
 * Postgres + Redis where the new instance takes the dead one's leases over). The workflow resumes
 * where it was and completes once: step 1 is never asked again, `workflow.completed` is published
 * and delivered once (one event id), and the run's end does not move on later reads or restarts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { FakeReply } from "@promptrun/core/testing";
import { countRows, waitUntil } from "./hardening/support.ts";
import { startServer, type TestServer } from "./support/server.ts";
import type { SseConnection } from "./support/sse.ts";
import {
  answer,
  getRun,
  lastUserText,
  type ModelRouter,
  openThreadStream,
  startModelRouter,
} from "./support/tool-runs.ts";
import { addWebhook, startWebhookReceiver } from "./support/webhook-receiver.ts";
import {
  createWorkflowRun,
  getWorkflowRun,
  pushPromptsOverRest,
  pushWorkflow,
  stepOf,
  textPrompt,
  waitForWorkflowRun,
} from "./support/workflows.ts";

const router: ModelRouter = startModelRouter();
const receiver = startWebhookReceiver();
let server: TestServer;
const streams: SseConnection[] = [];

/**
 * Step 2's model: its first answer stops after one token and stays silent until the server dies;
 * the next one (after the restart) is held until the test's SSE stream is open, so the stream
 * sees the workflow end.
 */
const held: FakeReply = { type: "stream", tokens: ["partial "], hangAfterTokens: 1 };
let releaseStepTwo: () => void = () => {};
const stepTwoReleased = new Promise<void>((resolve) => {
  releaseStepTwo = resolve;
});
router.script("crash-one", (request) => answer(`one(${lastUserText(request)})`));
router.script("crash-two", (request) =>
  router.requestsFor("crash-two").length === 1
    ? held
    : { ...answer(`two(${lastUserText(request)})`), holdBeforeFinish: stepTwoReleased },
);
router.script("crash-three", (request) => answer(`three(${lastUserText(request)})`));

beforeAll(async () => {
  server = await startServer({
    env: {
      OPENAI_API_KEY: "sk-test-openai",
      OPENAI_BASE_URL: router.baseUrl,
      PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: "0.2,0.2",
      // On Postgres the restarted instance takes over the dead one's leases once they lapse.
      PROMPTRUN_RUN_LEASE_MS: "2000",
    },
  });
  await pushPromptsOverRest(
    server,
    ["crash-one", "crash-two", "crash-three"].map((name) => textPrompt(name, `openai:${name}`)),
  );
  await addWebhook(server, server.tenantId, receiver, ["workflow.completed", "workflow.failed"]);
  await pushWorkflow(server, {
    slug: "sequence",
    inputs: { ticket: { type: "string" } },
    steps: [
      { id: "one", prompt: "crash-one", inputs: { text: "{{inputs.ticket}}" } },
      { id: "two", prompt: "crash-two", inputs: { text: "{{steps.one.output}}" } },
      { id: "three", prompt: "crash-three", inputs: { text: "{{steps.two.output}}" } },
    ],
  });
});
afterAll(async () => {
  for (const stream of streams) stream.close();
  await server?.dispose();
  await router.close();
  receiver.stop();
});

test("SIGKILL while step 2 is in flight: after the restart the workflow completes once, step 1 never asked again", async () => {
  const thread = crypto.randomUUID();
  const { id } = await createWorkflowRun(server, "sequence", { inputs: { ticket: "T" }, thread });
  // The known point: step 1 completed and stored, step 2's model call in flight.
  await waitUntil(() => router.requestsFor("crash-two").length === 1, "step 2's model call");
  const before = await getWorkflowRun(server, id);
  expect(before).toMatchObject({ status: "pending", phase: "running" });
  expect(before.steps.map((step) => step.status)).toEqual(["completed", "running", "pending"]);
  const stepOneRun = stepOf(before, "one").runId as string;
  const stepTwoRun = stepOf(before, "two").runId as string;
  expect(stepOf(before, "one").output).toBe("one(T)");

  await server.kill();
  server = await server.restart();
  const events = await openThreadStream(server, thread);
  streams.push(events);
  releaseStepTwo();

  const run = await waitForWorkflowRun(server, id, undefined, "ended", 60_000);
  expect(run).toMatchObject({ status: "completed", output: "three(two(one(T)))", error: null });
  expect(run.steps.map((step) => [step.id, step.status])).toEqual([
    ["one", "completed"],
    ["two", "completed"],
    ["three", "completed"],
  ]);
  // The steps keep their runs: step 1's is the one that completed before the kill, step 2's was resumed.
  expect(stepOf(run, "one").runId).toBe(stepOneRun);
  expect(stepOf(run, "two").runId).toBe(stepTwoRun);
  expect(await getRun(server, stepTwoRun)).toMatchObject({ status: "completed", output: "two(one(T))" });
  // The upstream: step 1 once in all, step 2 twice (the call the kill cut off, then its retry), step 3 once.
  expect(router.requestsFor("crash-one")).toHaveLength(1);
  expect(router.requestsFor("crash-two")).toHaveLength(2);
  expect(router.requestsFor("crash-three")).toHaveLength(1);
  // One prompt run per step: the restart inserted no second run for any step.
  expect(await countRows(server, "select count(*) as n from runs where thread_id = ?", thread)).toBe(3);

  // Ended once: one workflow.completed on the stream, one delivery (one event id) at the receiver.
  await events.waitFor((event) => event.event === "workflow.completed" && event.data.workflowRunId === id);
  const deliveriesOf = () => receiver.received.filter((delivery) => delivery.payload.data.id === id);
  await waitUntil(() => deliveriesOf().length > 0, "the workflow.completed delivery");
  await Bun.sleep(1_000);
  expect(
    events.events.filter((event) => event.event === "workflow.completed" && event.data.workflowRunId === id),
  ).toHaveLength(1);
  expect(deliveriesOf().map((delivery) => [delivery.payload.type, delivery.verified])).toEqual([
    ["workflow.completed", true],
  ]);
  expect(new Set(deliveriesOf().map((delivery) => delivery.id)).size).toBe(1);
  expect(
    await countRows(
      server,
      "select count(*) as n from webhook_deliveries where event_type = 'workflow.completed'",
    ),
  ).toBe(1);

  // The end does not move: not on a re-read, not after one more (graceful) restart and its recovery.
  expect((await getWorkflowRun(server, id)).finishedAt).toBe(run.finishedAt);
  server = await server.restart();
  await Bun.sleep(1_000);
  expect(await getWorkflowRun(server, id)).toEqual(run);
  expect(deliveriesOf()).toHaveLength(1);
  expect(router.requestsFor("crash-one")).toHaveLength(1);
  expect(router.requestsFor("crash-three")).toHaveLength(1);
}, 180_000);
