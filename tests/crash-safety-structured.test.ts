/**
 * Crash safety of a structured-output run (docs/PRODUCT-RULES.md "Runs", docs/ARCHITECTURE.md
 * step 5 and 7): a `json_schema` (strict) prompt on dev:echo streams slowly; the server is killed
 * (SIGKILL) once its first `run.token` reached an SSE subscriber, then restarted on the same
 * database (SQLite file, or Postgres + Redis where the new instance takes the dead one's leases
 * over). The run completes exactly once — one `run.completed` event, one row, one exchange in
 * memory, one webhook delivery — with `outputJson` matching the schema and `finishReason` "stop";
 * the exchange before it on the channel, a message with an image part, is carried (`memory`) and
 * kept as it was.
 */
import { afterAll, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020.js";
import { countRows, pushPrompts } from "./hardening/support.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";
import { SseConnection } from "./support/sse.ts";

const ticketSchema = {
  type: "object",
  properties: {
    summary: { type: "string" },
    topics: { type: "array", items: { type: "string" }, minItems: 1 },
    urgent: { type: "boolean" },
  },
  required: ["summary", "topics", "urgent"],
  additionalProperties: false,
};
const validateTicket = new Ajv2020({ strict: false, allErrors: true }).compile(ticketSchema);

const ticketPrompt = {
  slug: "slow-ticket",
  model: "dev:echo",
  // 16-character JSON pieces, 100 ms apart: the answer below streams for several seconds.
  params: { delayMs: 100 },
  inputs: { text: { type: "string" } },
  messages: [
    { role: "system", content: "Summarise the ticket." },
    { role: "user", content: "{{text}}" },
  ],
  output: { format: "json_schema", name: "ticket", strict: true, schema: ticketSchema },
};

/** A real 1×1 PNG. */
const PNG_DATA_URL =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/** A prompt whose user message is parts: its exchange is stored with them. */
const photoPrompt = {
  slug: "photo-note",
  model: "dev:echo",
  inputs: { note: { type: "string" }, photo: { type: "image" } },
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "{{note}}" },
        { type: "image", image: "{{photo}}" },
      ],
    },
  ],
};

interface Delivery {
  webhookId: string;
  type: string;
  data: Record<string, unknown>;
}
const received: Delivery[] = [];
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const body = (await request.json()) as { type: string; data: Record<string, unknown> };
    received.push({ webhookId: request.headers.get("webhook-id") ?? "", type: body.type, data: body.data });
    return new Response("ok");
  },
});

let server: TestServer | undefined;
const streams: SseConnection[] = [];
afterAll(async () => {
  for (const stream of streams) stream.close();
  await server?.dispose();
  receiver.stop(true);
});

async function openThreadStream(current: TestServer, thread: string): Promise<SseConnection> {
  const minted = await api(current, `/api/v1/threads/${thread}/stream-token`, { method: "POST" });
  expect(minted.status).toBe(200);
  const { token, url } = (await minted.json()) as { token: string; url: string };
  const stream = await SseConnection.open(url, { token });
  streams.push(stream);
  await stream.waitFor((event) => event.event === "ready");
  return stream;
}

const countFor = (current: TestServer, table: string, runId: string) =>
  countRows(current, `select count(*) as n from ${table} where run_id = ?`, runId);

test("SIGKILL mid-stream of a JSON-schema run: it completes once, with valid outputJson, after the restart", async () => {
  server = await startServer({ env: { PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: "0.2,0.2" } });
  await pushPrompts(server, server.tenantId, [ticketPrompt, photoPrompt]);
  expect((await server.cli("envs", "set", server.tenantId, "hooks", "PURPOSE=webhooks")).code).toBe(0);
  const hook = await server.cli(
    "webhooks",
    "add",
    server.tenantId,
    "hooks",
    `http://127.0.0.1:${receiver.port}/hook`,
  );
  expect(hook.code).toBe(0);

  const thread = crypto.randomUUID();
  // The channel's first exchange: a message with an image part, completed before the kill.
  const photoResponse = await api(server, `/api/v1/prompts/${photoPrompt.slug}/latest/runs`, {
    method: "POST",
    json: { inputs: { note: "jammed tray", photo: PNG_DATA_URL }, thread },
  });
  expect(photoResponse.status).toBe(202);
  const photoRunId = ((await photoResponse.json()) as { id: string }).id;
  expect(await waitForRun(server, photoRunId, 10_000)).toMatchObject({ status: "completed" });
  const partsOf = async (current: TestServer) =>
    (
      await current.sql<{ run_id: string; role: string; content: string; parts: unknown }>(
        "select run_id, role, content, parts from messages where thread_id = ? order by seq",
        [thread],
      )
    ).map((message) => ({
      ...message,
      parts: typeof message.parts === "string" ? JSON.parse(message.parts) : message.parts,
    }));
  const firstExchange = await partsOf(server);
  expect(firstExchange).toEqual([
    {
      run_id: photoRunId,
      role: "user",
      content: "jammed tray",
      parts: [
        { type: "text", text: "jammed tray" },
        { type: "image", image: PNG_DATA_URL },
      ],
    },
    { run_id: photoRunId, role: "assistant", content: "jammed tray", parts: null },
  ]);

  const before = await openThreadStream(server, thread);
  const text = `The printer on floor ${"three keeps jamming on every long job ".repeat(8)}and nobody can print.`;
  const response = await api(server, `/api/v1/prompts/${ticketPrompt.slug}/latest/runs`, {
    method: "POST",
    json: { inputs: { text }, thread, environment: "hooks" },
  });
  expect(response.status).toBe(202);
  const { id } = (await response.json()) as { id: string };

  await before.waitFor((event) => event.event === "run.token" && event.data.runId === id, 30_000);
  await server.kill();
  before.close();

  // The premise: killed mid-stream, before the run ended or wrote anything of its end.
  const [row] = await server.sql<{ status: string }>("select status from runs where id = ?", [id]);
  expect(row?.status).toBe("pending");
  // (Filtered by run: on Postgres the earlier run's events may reach this stream through Redis late.)
  expect(before.events.some((event) => event.event === "run.completed" && event.data.runId === id)).toBe(
    false,
  );
  expect(await countFor(server, "messages", id)).toBe(0);
  expect(await countFor(server, "webhook_deliveries", id)).toBe(0);

  server = await server.restart();
  const after = await openThreadStream(server, thread);
  const completed = await after.waitFor(
    (event) => event.event === "run.completed" && event.data.runId === id,
    60_000,
  );
  const run = await waitForRun(server, id, 60_000);
  expect(run.status, JSON.stringify(run)).toBe("completed");
  expect(validateTicket(run.outputJson), JSON.stringify(validateTicket.errors)).toBe(true);
  expect(JSON.parse(String(run.output))).toEqual(run.outputJson);
  expect(run.finishReason).toBe("stop");
  expect(run.memory).toEqual({ messages: 2, dropped: 0 });
  expect(completed.data).toMatchObject({
    output: run.output,
    outputJson: run.outputJson,
    finishReason: "stop",
    memory: { messages: 2, dropped: 0 },
  });
  // The resumed attempt streams the answer from its start; this subscriber, connected just after
  // the restart, may have missed its first pieces, so what it saw is the answer's end.
  const streamed = after.events
    .filter((event) => event.event === "run.token" && event.data.runId === id)
    .map((event) => String(event.data.delta))
    .join("");
  expect(streamed.length).toBeGreaterThan(0);
  expect(String(run.output).endsWith(streamed)).toBe(true);

  // Exactly once: no second completion shows up, in events, rows, memory or webhooks.
  const deadline = Date.now() + 20_000;
  while (!received.some((delivery) => delivery.data.id === id) && Date.now() < deadline) await Bun.sleep(25);
  await Bun.sleep(1_000);
  expect(
    after.events.filter((event) => event.event === "run.completed" && event.data.runId === id),
  ).toHaveLength(1);
  expect(await countRows(server, "select count(*) as n from runs where id = ?", id)).toBe(1);
  // The channel's memory: the image exchange as it was, then this run's exchange, once.
  expect(await partsOf(server)).toEqual([
    ...firstExchange,
    { run_id: id, role: "user", content: text, parts: null },
    { run_id: id, role: "assistant", content: String(run.output), parts: null },
  ]);
  const deliveries = await server.sql<{ event_type: string; status: string }>(
    "select event_type, status from webhook_deliveries where run_id = ?",
    [id],
  );
  expect(deliveries).toEqual([{ event_type: "run.completed", status: "delivered" }]);
  const forRun = received.filter((delivery) => delivery.data.id === id);
  expect(forRun).toHaveLength(1);
  expect(forRun[0]).toMatchObject({
    type: "run.completed",
    data: { status: "completed", outputJson: run.outputJson, finishReason: "stop" },
  });
}, 180_000);
