/**
 * Helpers of the tool e2e suites (docs/TOOLS.md): a fake OpenAI that answers each model by its
 * own script (so tests count their own model calls), a webhook receiver, a thread's SSE stream,
 * runs created and polled over REST, and tool outputs submitted over REST.
 */
import { expect } from "bun:test";
import {
  type FakeProviderServer,
  type FakeReply,
  type FakeRequest,
  startFakeOpenAI,
} from "@promptrun/core/testing";
import { api, type TestServer } from "./server.ts";
import { type ReceivedEvent, SseConnection } from "./sse.ts";

type Json = Record<string, unknown>;
export type Run = Json;

/** The model a request asked for (`openai:<model>` in a prompt). */
export const modelOf = (request: FakeRequest): string => String((request.body as Json | null)?.model ?? "");

/** The messages of an OpenAI chat-completions request. */
export const messagesOf = (request: FakeRequest): Json[] =>
  ((request.body as Json | null)?.messages as Json[] | undefined) ?? [];

/** The role of the request's last message (`tool` once a step's results are sent back). */
export const lastRole = (request: FakeRequest): string => String(messagesOf(request).at(-1)?.role ?? "");

/** The text of the request's last user message. */
export const lastUserText = (request: FakeRequest): string => {
  const user = messagesOf(request).findLast((message) => message.role === "user");
  const content = user?.content;
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((part: Json) => String(part.text ?? "")).join("") : "";
};

export interface ModelRouter {
  provider: FakeProviderServer;
  /** `OPENAI_BASE_URL` for the server. */
  baseUrl: string;
  /** Scripts the model `name` (`openai:<name>` in prompts); a promise holds the answer back until it settles. */
  script(name: string, reply: (request: FakeRequest) => FakeReply | Promise<FakeReply>): void;
  /** The requests that asked for the model `name`, in order. */
  requestsFor(name: string): FakeRequest[];
  close(): Promise<void>;
}

/** One fake OpenAI for many models, each answered by its own script (unknown models get a 400). */
export function startModelRouter(): ModelRouter {
  const scripts = new Map<string, (request: FakeRequest) => FakeReply | Promise<FakeReply>>();
  const provider = startFakeOpenAI((request) => {
    const script = scripts.get(modelOf(request));
    return script
      ? script(request)
      : { type: "error", status: 400, message: `no script for ${modelOf(request)}` };
  });
  return {
    provider,
    baseUrl: provider.baseUrl,
    script: (name, reply) => void scripts.set(name, reply),
    requestsFor: (name) => provider.requests.filter((request) => modelOf(request) === name),
    close: () => provider.close(),
  };
}

export interface WebhookDelivery {
  webhookId: string;
  type: string;
  data: Run;
  /** The whole body as received. */
  payload: Json;
}

export interface WebhookReceiver {
  url: string;
  received: WebhookDelivery[];
  /** The deliveries of one run, in arrival order. */
  of(runId: string): WebhookDelivery[];
  stop(): void;
}

/** A local webhook endpoint that records every delivery and answers 200. */
export function startWebhookReceiver(): WebhookReceiver {
  const received: WebhookDelivery[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = (await request.json()) as { type: string; data: Run };
      received.push({
        webhookId: request.headers.get("webhook-id") ?? "",
        type: body.type,
        data: body.data,
        payload: body,
      });
      return new Response("ok");
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hook`,
    received,
    of: (runId) => received.filter((delivery) => delivery.data.id === runId),
    stop: () => server.stop(true),
  };
}

/** An environment `name` whose webhook gets `events` at `receiver`. */
export async function addWebhookEnvironment(
  server: TestServer,
  name: string,
  receiverUrl: string,
  events: string[],
): Promise<void> {
  expect((await server.cli("envs", "set", server.tenantId, name, "PURPOSE=webhooks")).code).toBe(0);
  const added = await server.cli(
    "webhooks",
    "add",
    server.tenantId,
    name,
    receiverUrl,
    "--events",
    events.join(","),
  );
  expect(added.code, added.stderr).toBe(0);
}

/** A thread's SSE stream, connected (its `ready` received). */
export async function openThreadStream(server: TestServer, thread: string): Promise<SseConnection> {
  const minted = await api(server, `/api/v1/threads/${thread}/stream-token`, { method: "POST" });
  expect(minted.status).toBe(200);
  const { token, url } = (await minted.json()) as { token: string; url: string };
  const stream = await SseConnection.open(url, { token });
  await stream.waitFor((event) => event.event === "ready");
  return stream;
}

/** The event types of one run, a burst of `run.token` shown once (`run.token…`). */
export function eventTrail(events: ReceivedEvent[], runId: string): string[] {
  const trail: string[] = [];
  for (const event of events) {
    if (event.data.runId !== runId) continue;
    const name = event.event === "run.token" ? "run.token…" : event.event;
    if (name === "run.token…" && trail.at(-1) === name) continue;
    trail.push(name);
  }
  return trail;
}

/** POST …/runs of the latest version; 202 expected. */
export async function createRun(
  server: TestServer,
  slug: string,
  body: Json,
): Promise<{ id: string; thread: string }> {
  const response = await api(server, `/api/v1/prompts/${slug}/latest/runs`, { method: "POST", json: body });
  expect(response.status, await response.clone().text()).toBe(202);
  return (await response.json()) as { id: string; thread: string };
}

export async function getRun(server: TestServer, id: string): Promise<Run> {
  const response = await api(server, `/api/v1/promptruns/${id}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Run;
}

/** Polls a run until `done` holds (or throws after timeoutMs, showing the run). */
export async function waitForRunState(
  server: TestServer,
  id: string,
  done: (run: Run) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<Run> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await getRun(server, id);
    if (done(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${id} never ${what}: ${JSON.stringify(run)}`);
    await Bun.sleep(25);
  }
}

/** Waits for a run to pause for tool outputs; fails at once if it ends instead. */
export async function waitForPause(server: TestServer, id: string, timeoutMs = 20_000): Promise<Run> {
  const run = await waitForRunState(
    server,
    id,
    (current) => current.phase === "requires_action" || current.status !== "pending",
    "paused",
    timeoutMs,
  );
  expect(run.phase, JSON.stringify(run)).toBe("requires_action");
  return run;
}

export interface RequiredAction {
  type: string;
  toolCalls: Array<{ id: string; name: string; arguments: Json }>;
  expiresAt: string;
}

export const requiredActionOf = (run: Run): RequiredAction => run.requiredAction as RequiredAction;

/** POST /promptruns/{id}/tool-outputs with `{toolOutputs}` (as JSON unless `body` is given raw). */
export function submitToolOutputs(
  server: Pick<TestServer, "url" | "apiKey">,
  id: string,
  toolOutputs: Array<{ toolCallId: string; output?: unknown }>,
  options: { idempotencyKey?: string; key?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = {};
  if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey;
  return api(server, `/api/v1/promptruns/${id}/tool-outputs`, {
    method: "POST",
    json: { toolOutputs },
    headers,
    ...(options.key === undefined ? {} : { key: options.key }),
  });
}

/** An `{error}` answer: its status and message. */
export async function errorOf(response: Response): Promise<{ status: number; error: string }> {
  const body = (await response.json()) as { error?: unknown };
  expect(typeof body.error, JSON.stringify(body)).toBe("string");
  return { status: response.status, error: String(body.error) };
}

/** A tool call the fake model streams. */
export const toolCall = (id: string, name: string, args: Json | string) => ({ id, name, arguments: args });

/** The fake's reply asking for tool calls. */
export const callTools = (
  calls: Array<ReturnType<typeof toolCall>>,
  usage = { input: 100, output: 20 },
): FakeReply => ({ type: "stream", tokens: [], toolCalls: calls, usage });

/** The fake's reply answering with text. */
export const answer = (text: string, usage = { input: 150, output: 10 }): FakeReply => ({
  type: "stream",
  tokens: text.split(/(?<= )/),
  usage,
});
