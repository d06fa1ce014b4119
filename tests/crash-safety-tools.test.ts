/**
 * Crash safety of tool runs (docs/TOOLS.md "Crash safety"): the server is killed (SIGKILL) at a
 * known point of a tool loop and restarted on the same database (SQLite file, or Postgres + Redis
 * with PROMPTRUN_E2E_DATABASE=postgres). A paused run stays paused with the same required action
 * and completes once after its outputs; a run killed while its http tool was running continues
 * from its stored step (never sent to the model again; the tool runs again: at least once); a
 * run queued behind a paused one on its channel keeps waiting across the restart.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { hangUntilAborted, type LocalServer, startHttpServer } from "@promptrun/core/testing";
import { countRows, pushPrompts, waitUntil } from "./hardening/support.ts";
import { startServer, type TestServer, waitForRun } from "./support/server.ts";
import type { SseConnection } from "./support/sse.ts";
import {
  addWebhookEnvironment,
  answer,
  callTools,
  createRun,
  getRun,
  lastRole,
  type ModelRouter,
  openThreadStream,
  type Run,
  requiredActionOf,
  startModelRouter,
  startWebhookReceiver,
  submitToolOutputs,
  toolCall,
  type WebhookReceiver,
  waitForPause,
  waitForRunState,
} from "./support/tool-runs.ts";

const PRICE = { inputPerMillion: 1, cachedInputPerMillion: 0.5, outputPerMillion: 2 };
const router: ModelRouter = startModelRouter();
const receiver: WebhookReceiver = startWebhookReceiver();

/** The inventory API: holds its answers (never answering) while `holding`, then answers at once. */
let holding = true;
const inventory: LocalServer = startHttpServer((request, url) =>
  holding ? hangUntilAborted(request) : Response.json({ sku: url.searchParams.get("sku"), inStock: 7 }),
);

let server: TestServer;
const streams: SseConnection[] = [];

const messageInput = { message: { type: "string" } };
const userMessage = [{ role: "user", content: "{{message}}" }];
const lookupOrder = {
  type: "function",
  name: "lookup_order",
  parameters: { type: "object", properties: { number: { type: "string" } }, required: ["number"] },
};

beforeAll(async () => {
  server = await startServer({
    env: {
      OPENAI_API_KEY: "sk-test-openai",
      OPENAI_BASE_URL: router.baseUrl,
      PROMPTRUN_PRICES: JSON.stringify({ "openai:stock": PRICE, "openai:orders": PRICE }),
      PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: "0.2,0.2",
      // On Postgres the restarted instance takes over the dead one's leases once they lapse.
      PROMPTRUN_RUN_LEASE_MS: "2000",
    },
  });
  await pushPrompts(server, server.tenantId, [
    {
      slug: "orders",
      model: "openai:orders",
      inputs: messageInput,
      messages: userMessage,
      tools: [lookupOrder],
    },
    {
      slug: "stock",
      model: "openai:stock",
      inputs: messageInput,
      messages: userMessage,
      tools: [
        {
          type: "http",
          name: "check_stock",
          parameters: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
          request: { url: `${inventory.origin}/stock?sku={{args.sku}}` },
        },
      ],
    },
    { slug: "plain", model: "dev:echo", inputs: messageInput, messages: userMessage },
  ]);
  await addWebhookEnvironment(server, "hooks", receiver.url, ["run.requires_action", "run.completed"]);
});
afterAll(async () => {
  for (const stream of streams) stream.close();
  await server?.dispose();
  await router.close();
  receiver.stop();
  inventory.stop();
});

router.script("orders", (request) =>
  lastRole(request) === "tool"
    ? answer(`Order: ${String(request.toolResults.at(-1)!.content)}`)
    : callTools([toolCall("call_o1", "lookup_order", { number: "A-1" })]),
);
router.script("stock", (request) =>
  lastRole(request) === "tool"
    ? answer(`Stock: ${String(request.toolResults.at(-1)!.content)}`, { input: 160, output: 8 })
    : callTools([toolCall("call_s1", "check_stock", { sku: "KB-42" })], { input: 110, output: 15 }),
);

async function killAndRestart(): Promise<void> {
  for (const stream of streams.splice(0)) stream.close();
  await server.kill();
  server = await server.restart();
}

const round = (value: number) => Math.round(value * 1e12) / 1e12;
const priceOf = (input: number, output: number) =>
  round((input * PRICE.inputPerMillion + output * PRICE.outputPerMillion) / 1e6);
type Step = {
  index: number;
  toolResults: Array<Record<string, unknown>>;
  usage: Record<string, number>;
  cost: { total: number };
};
const stepsOf = (run: Run) => run.steps as Step[];

test("SIGKILL while paused: after the restart the run is still paused as it was; outputs complete it exactly once", async () => {
  const thread = crypto.randomUUID();
  const { id } = await createRun(server, "orders", {
    inputs: { message: "Where is A-1?" },
    thread,
    environment: "hooks",
  });
  const paused = await waitForPause(server, id);
  // The pause's webhook delivered first, so "once" below is about what the restart does.
  await waitUntil(
    async () =>
      (await countRows(
        server,
        "select count(*) as n from webhook_deliveries where run_id = ? and status = 'delivered'",
        id,
      )) === 1,
    "the run.requires_action delivery",
  );
  await killAndRestart();

  const after = await getRun(server, id);
  expect(after).toMatchObject({ status: "pending", phase: "requires_action" });
  expect(after.requiredAction).toEqual(paused.requiredAction);
  expect(after.steps).toEqual(paused.steps);
  expect(router.requestsFor("orders")).toHaveLength(1);

  const events = await openThreadStream(server, thread);
  streams.push(events);
  const submitted = await submitToolOutputs(server, id, [{ toolCallId: "call_o1", output: "shipped" }]);
  expect(submitted.status).toBe(202);
  await events.waitFor((event) => event.event === "run.completed" && event.data.runId === id);
  const run = await waitForRun(server, id);
  expect(run).toMatchObject({ status: "completed", output: "Order: shipped" });
  expect(stepsOf(run)).toHaveLength(2);

  await waitUntil(
    () => receiver.of(id).some((delivery) => delivery.type === "run.completed"),
    "run.completed",
  );
  await Bun.sleep(500);
  expect(
    events.events.filter((event) => event.event === "run.completed" && event.data.runId === id),
  ).toHaveLength(1);
  expect(receiver.of(id).map((delivery) => delivery.type)).toEqual(["run.requires_action", "run.completed"]);
  const deliveries = await server.sql<{ event_type: string; status: string }>(
    "select event_type, status from webhook_deliveries where run_id = ? order by event_type desc",
    [id],
  );
  expect(deliveries).toEqual([
    { event_type: "run.requires_action", status: "delivered" },
    { event_type: "run.completed", status: "delivered" },
  ]);
  expect(await countRows(server, "select count(*) as n from runs where id = ?", id)).toBe(1);
  const memory = await server.sql<{ role: string }>(
    "select role from messages where run_id = ? order by seq",
    [id],
  );
  expect(memory.map((row) => row.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  // In all: the call that paused, and the one after the outputs.
  expect(router.requestsFor("orders")).toHaveLength(2);
}, 120_000);

test("SIGKILL while an http tool runs: step 0 is not sent to the model again, the tool runs again, the run completes once", async () => {
  holding = true;
  const toolCallsBefore = inventory.received.length;
  const { id } = await createRun(server, "stock", { inputs: { message: "Is KB-42 in stock?" } });
  // The known point: the step is stored and its tool call is in flight.
  await waitUntil(() => inventory.received.length > toolCallsBefore, "the tool call");
  const [stored] = await server.sql<{ status: string; steps: unknown }>(
    "select status, steps from runs where id = ?",
    [id],
  );
  expect(stored?.status).toBe("pending");
  const storedSteps = (
    typeof stored?.steps === "string" ? JSON.parse(stored.steps) : stored?.steps
  ) as Step[];
  expect(storedSteps).toHaveLength(1);
  expect(storedSteps[0]!.toolResults).toEqual([]);
  await server.kill();
  holding = false;
  server = await server.restart();

  const run = await waitForRun(server, id, 60_000);
  expect(run).toMatchObject({ status: "completed", output: 'Stock: {"sku":"KB-42","inStock":7}' });
  // The model: step 0 once (before the kill), step 1 once (after it).
  const modelCalls = router.requestsFor("stock");
  expect(modelCalls).toHaveLength(2);
  expect(modelCalls[1]!.toolResults).toEqual([
    { toolCallId: "call_s1", content: '{"sku":"KB-42","inStock":7}' },
  ]);
  // The tool: at least once more after the restart (its result had not been stored); http tools
  // are executed at least once, so twice in all here.
  const toolCalls = inventory.received.slice(toolCallsBefore);
  expect(toolCalls.length).toBeGreaterThanOrEqual(2);
  expect(new Set(toolCalls.map((received) => received.target))).toEqual(new Set(["/stock?sku=KB-42"]));

  const steps = stepsOf(run);
  expect(steps.map((step) => step.index)).toEqual([0, 1]);
  expect(steps[0]!.toolResults).toEqual([
    {
      toolCallId: "call_s1",
      name: "check_stock",
      output: { sku: "KB-42", inStock: 7 },
      isError: false,
      executedBy: "server",
    },
  ]);
  expect(steps[0]!.usage).toEqual({ input: 110, inputCached: 0, output: 15, reasoning: 0, total: 125 });
  expect(steps[1]!.usage).toEqual({ input: 160, inputCached: 0, output: 8, reasoning: 0, total: 168 });
  expect(run.tokenUsage).toEqual({ input: 270, inputCached: 0, output: 23, reasoning: 0, total: 293 });
  expect(round(steps[0]!.cost.total)).toBe(priceOf(110, 15));
  expect(round(steps[1]!.cost.total)).toBe(priceOf(160, 8));
  expect(round((run.cost as { total: number }).total)).toBe(round(priceOf(110, 15) + priceOf(160, 8)));
  expect(await countRows(server, "select count(*) as n from runs where id = ?", id)).toBe(1);
  const memory = await server.sql<{ role: string }>(
    "select role from messages where run_id = ? order by seq",
    [id],
  );
  expect(memory.map((row) => row.role)).toEqual(["user", "assistant", "tool", "assistant"]);
}, 120_000);

test("SIGKILL while a run waits behind a paused one: after the restart it still waits until the paused one ends", async () => {
  const thread = crypto.randomUUID();
  const paused = await createRun(server, "orders", { inputs: { message: "Where is A-1?" }, thread });
  await waitForPause(server, paused.id);
  const behind = await createRun(server, "plain", { inputs: { message: "and my refund?" }, thread });
  expect(await getRun(server, behind.id)).toMatchObject({
    status: "pending",
    phase: "queued",
    startedAt: null,
  });
  await killAndRestart();

  // The restarted server runs other work (a run on another thread completes), and past the
  // lease of the dead instance the run behind the pause has still not started.
  const other = await createRun(server, "plain", { inputs: { message: "elsewhere" } });
  expect(await waitForRun(server, other.id)).toMatchObject({ status: "completed" });
  await Bun.sleep(2_500);
  expect(await getRun(server, behind.id)).toMatchObject({
    status: "pending",
    phase: "queued",
    startedAt: null,
  });
  expect(await getRun(server, paused.id)).toMatchObject({ status: "pending", phase: "requires_action" });

  expect(
    (await submitToolOutputs(server, paused.id, [{ toolCallId: "call_o1", output: "delivered" }])).status,
  ).toBe(202);
  const first = await waitForRun(server, paused.id);
  expect(first).toMatchObject({ status: "completed", output: "Order: delivered" });
  const second = await waitForRunState(server, behind.id, (run) => run.status !== "pending", "ended");
  expect(second).toMatchObject({ status: "completed", output: "and my refund?" });
  // It went after the paused run, carrying its whole exchange (user, call, result, answer).
  expect(Date.parse(String(second.startedAt))).toBeGreaterThanOrEqual(Date.parse(String(first.finishedAt)));
  expect(second.memory).toEqual({ messages: 4, dropped: 0 });
  expect(requiredActionOf(await getRun(server, paused.id))).toBeNull();
}, 120_000);
