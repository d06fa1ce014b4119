import {
  type Cost,
  createRunRequestSchema,
  isUuid,
  type PromptRun,
  type RunMemory,
  type RunStep,
  type StreamEvent,
  type SubmitToolOutputsRequest,
  submitToolOutputsRequestSchema,
  type ThreadEvent,
  type TokenUsage,
  type ToolCall,
} from "@promptrun/contract";
import {
  createFakeWorkflowRuns,
  type FakeWorkflowRunRequest,
  type FakeWorkflowScript,
} from "./fake-workflow-runs.ts";

export type {
  FakeWorkflowRunRequest,
  FakeWorkflowScript,
  FakeWorkflowStepScript,
} from "./fake-workflow-runs.ts";

/** What a fake run does: the tokens it streams, how fast, and how it ends. */
export interface FakeRunScript {
  tokens: string[];
  /** Pause before each token, in ms (default 0). */
  tokenDelayMs?: number;
  /** End the run `failed` with this message after the tokens. */
  fail?: string;
  /** Simulate a provider retry: stream this many tokens, then start attempt 2 from scratch. */
  retryAfterTokens?: number;
  /** The completed run's `outputJson` (a prompt with an output schema; let `tokens` spell its JSON). */
  outputJson?: unknown;
  /** The completed run's `memory` (default `{messages: 0, dropped: 0}`). */
  memory?: RunMemory;
  /**
   * After the tokens, pause for these client tool calls (`phase: requires_action`, with
   * `run.tool_call` and `run.requires_action` events) until `POST /api/v1/promptruns/{id}/tool-outputs`
   * answers them; then `afterToolOutputs` decides the next step.
   */
  toolCalls?: ToolCall[];
  /** The step after the outputs arrive (default: the outputs as JSON text, then completed). */
  afterToolOutputs?: (outputs: ToolOutputs) => FakeRunScript;
  /** Seconds a pause waits before the run fails (default 600). */
  toolTimeoutSeconds?: number;
}

/** The outputs a caller submitted, as the fake received them. */
export type ToolOutputs = SubmitToolOutputsRequest["toolOutputs"];

/** One accepted tool-outputs submission, for assertions. */
export interface FakeToolOutputsSubmission {
  runId: string;
  toolOutputs: ToolOutputs;
  idempotencyKey: string | null;
}

/** A created run as the fake saw it. */
export interface FakeRunRequest {
  slug: string;
  version: string;
  body: Record<string, unknown>;
  idempotencyKey: string | null;
}

/** Options of {@link startFakePromptrunServer}. */
export interface FakePromptrunServerOptions {
  /** The API key it accepts (default `pr_test_key`). */
  apiKey?: string;
  /** Decides what each created run does (default: echo `inputs.message` word by word). */
  script?: (request: FakeRunRequest) => FakeRunScript;
  /**
   * Decides the steps of each created workflow run, run in order (default: one prompt step per
   * string of `inputs.steps`, ids `step_1`, `step_2`, …, each scripted by `script` as a run whose
   * `inputs.message` is that string; one step `step_1` of "hello" without `inputs.steps`).
   */
  workflowScript?: (request: FakeWorkflowRunRequest) => FakeWorkflowScript;
  /** Stream token lifetime in seconds (default 300). */
  tokenTtlSeconds?: number;
  /** Port to listen on (default 0: any free port). */
  port?: number;
}

/** One accepted or refused stream connection, for assertions. */
export interface FakeStreamConnection {
  thread: string;
  token: string | null;
  lastEventId: string | null;
  status: number;
}

/** A running fake; see {@link startFakePromptrunServer}. */
export interface FakePromptrunServer {
  url: string;
  apiKey: string;
  /** Every stream connection attempt, in order. */
  connections: FakeStreamConnection[];
  /** Every run creation the fake accepted, in order. */
  createdRuns: FakeRunRequest[];
  /** Every tool-outputs submission the fake accepted, in order. */
  toolOutputSubmissions: FakeToolOutputsSubmission[];
  /** Every workflow run creation the fake accepted (an idempotent replay excepted), in order. */
  createdWorkflowRuns: FakeWorkflowRunRequest[];
  /** Publishes a run event on a thread (what the engine would do); returns its SSE id. */
  publish(thread: string, event: ThreadEvent): string;
  /** Streams currently open (on `thread`, when given). */
  openStreams(thread?: string): number;
  /** Closes every open stream without an `end` event, as a network drop would. */
  dropStreams(): number;
  /** Makes every token minted so far invalid; with `end`, also ends open streams with `token_expired`. */
  expireTokens(options?: { end?: boolean }): void;
  /** Answers the next `count` stream connections with `status` (e.g. 503). */
  failNextStreamConnections(count: number, status: number): void;
  stop(): Promise<void>;
}

interface Subscriber {
  thread: string;
  send(id: string, type: StreamEvent["type"], data: unknown): void;
  close(): void;
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers });
const error = (status: number, message: string, code?: string) => json({ error: message, code }, status);

const defaultScript = (request: FakeRunRequest): FakeRunScript => {
  const message = request.body.inputs;
  const text =
    message && typeof message === "object" && "message" in message ? String(message.message) : "hello";
  return { tokens: text.split(/(?<= )/) };
};

/** The default workflow script: one step per string of `inputs.steps`, scripted by the run script. */
const stepsFromInputs =
  (script: (request: FakeRunRequest) => FakeRunScript) =>
  (request: FakeWorkflowRunRequest): FakeWorkflowScript => {
    const { steps, ...inputs } = (request.body.inputs ?? {}) as Record<string, unknown>;
    const messages = Array.isArray(steps) ? steps.map(String) : ["hello"];
    return {
      steps: messages.map((message, index) => ({
        id: `step_${index + 1}`,
        script: script({ ...request, body: { ...request.body, inputs: { ...inputs, message } } }),
      })),
    };
  };

const usageFor = (inputTokens: number, outputTokens: number): TokenUsage => ({
  input: inputTokens,
  inputCached: 0,
  output: outputTokens,
  reasoning: 0,
  total: inputTokens + outputTokens,
});

/** $1 per million input tokens, $2 per million output tokens. */
const costFor = (usage: TokenUsage, retriedOutputTokens: number): Cost => {
  const block = (input: number, output: number) => ({
    input: input / 1_000_000,
    cachedInput: 0,
    output: (output * 2) / 1_000_000,
    webSearch: 0,
    total: input / 1_000_000 + (output * 2) / 1_000_000,
  });
  const success = block(usage.input, usage.output);
  const retries = block(0, retriedOutputTokens);
  return { success, retries, total: success.total + retries.total };
};

/**
 * A small in-memory server that speaks Promptrun's REST + SSE contract with scripted runs,
 * client tool calls included (a script's `toolCalls` pause the run until
 * `POST /api/v1/promptruns/{id}/tool-outputs`). For tests of clients and UIs that must not depend
 * on the engine. It also answers control
 * requests under `/__fake/` so a test can drive a fake running in another process:
 * `POST /__fake/drop-streams`, `POST /__fake/expire-tokens?end=1`,
 * `POST /__fake/fail-stream-connections?count=N&status=S`, `GET /__fake/connections`,
 * `GET /__fake/open-streams?thread=T`.
 */
export function startFakePromptrunServer(options: FakePromptrunServerOptions = {}): FakePromptrunServer {
  const apiKey = options.apiKey ?? "pr_test_key";
  const script = options.script ?? defaultScript;
  const tokenTtlSeconds = options.tokenTtlSeconds ?? 300;
  const tokens = new Map<string, { thread: string; expiresAt: number }>();
  const runs = new Map<string, PromptRun>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const subscribers = new Set<Subscriber>();
  const history = new Map<string, Array<{ id: number; event: ThreadEvent }>>();
  const connections: FakeStreamConnection[] = [];
  const createdRuns: FakeRunRequest[] = [];
  const toolOutputSubmissions: FakeToolOutputsSubmission[] = [];
  const cancelled = new Set<string>();
  let failingConnections = { count: 0, status: 503 };

  const publish = (thread: string, event: ThreadEvent): string => {
    const events = history.get(thread) ?? [];
    const id = (events.at(-1)?.id ?? 0) + 1;
    events.push({ id, event });
    history.set(thread, events);
    for (const subscriber of subscribers) {
      if (subscriber.thread === thread) subscriber.send(String(id), event.type, event.data);
    }
    return String(id);
  };

  const later = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  /** Where a run stands between steps: its next token index and step. */
  interface Progress {
    index: number;
    step: number;
    retriedTokens: number;
  }
  /** Paused runs: what continues them. */
  const pauses = new Map<
    string,
    { script: FakeRunScript; progress: Progress; timer: ReturnType<typeof setTimeout> }
  >();

  const stepOf = (step: number, text: string, toolCalls: ToolCall[], tokens: number): RunStep => {
    const now = new Date().toISOString();
    const usage = usageFor(10, tokens);
    return {
      index: step,
      model: "fake:model",
      text,
      toolCalls,
      toolResults: [],
      finishReason: toolCalls.length > 0 ? "tool-calls" : "stop",
      usage,
      cost: costFor(usage, 0),
      startedAt: now,
      finishedAt: now,
    };
  };

  // long-function: one scripted run step: start, tokens (with a simulated retry), then pause, fail or complete.
  async function execute(run: PromptRun, runScript: FakeRunScript, progress?: Progress): Promise<void> {
    const base = { runId: run.id, thread: run.thread, channel: run.channel };
    const prompt = { slug: run.prompt.slug, version: run.prompt.version };
    let retriedTokens = progress?.retriedTokens ?? 0;
    let attempt = 1;
    const step = progress?.step ?? 0;
    const firstIndex = progress?.index ?? 0;
    await later(5);
    // As the engine: the run's start (first step only), then each model call's step.
    if (!progress) publish(run.thread, { type: "run.started", data: { ...base, prompt, attempt } });
    publish(run.thread, { type: "run.step", data: { runId: run.id, step } });
    let index = firstIndex;
    for (let position = 0; position < runScript.tokens.length; position += 1) {
      if (runScript.tokenDelayMs) await later(runScript.tokenDelayMs);
      if (cancelled.has(run.id)) return;
      if (
        attempt === 1 &&
        runScript.retryAfterTokens !== undefined &&
        position === runScript.retryAfterTokens
      ) {
        retriedTokens += position;
        attempt = 2;
        index = firstIndex;
        position = -1;
        publish(run.thread, { type: "run.started", data: { ...base, prompt, attempt } });
        continue;
      }
      const delta = runScript.tokens[position] ?? "";
      publish(run.thread, { type: "run.token", data: { runId: run.id, channel: run.channel, index, delta } });
      index += 1;
    }
    if (cancelled.has(run.id)) return;
    const text = runScript.tokens.join("");
    const toolCalls = runScript.toolCalls ?? [];
    run.steps = [...run.steps, stepOf(step, text, toolCalls, runScript.tokens.length)];
    run.attempts = attempt;
    if (toolCalls.length > 0) {
      pause(run, runScript, { index, step: step + 1, retriedTokens });
      return;
    }
    const finishedAt = new Date().toISOString();
    const totalTokens = run.steps.reduce((sum, each) => sum + each.usage.output, 0);
    if (runScript.fail) {
      const cost = costFor(usageFor(0, 0), retriedTokens + totalTokens);
      Object.assign(run, { status: "failed", error: runScript.fail, cost, finishedAt, phase: null });
      publish(run.thread, {
        type: "run.failed",
        data: { runId: run.id, error: runScript.fail, cost, finishedAt },
      });
      return;
    }
    const output = text;
    const tokenUsage = usageFor(10 * run.steps.length, totalTokens);
    const cost = costFor(tokenUsage, retriedTokens);
    const outputJson = runScript.outputJson ?? null;
    const memory = runScript.memory ?? { messages: 0, dropped: 0 };
    Object.assign(run, {
      status: "completed",
      output,
      tokenUsage,
      cost,
      finishedAt,
      outputJson,
      finishReason: "stop",
      phase: null,
      memory,
    });
    publish(run.thread, {
      type: "run.completed",
      data: { runId: run.id, output, outputJson, finishReason: "stop", memory, tokenUsage, cost, finishedAt },
    });
  }

  /** Pauses a run for its script's tool calls; it fails if nobody answers in time. */
  function pause(run: PromptRun, runScript: FakeRunScript, progress: Progress): void {
    const toolCalls = runScript.toolCalls ?? [];
    const expiresAt = new Date(Date.now() + (runScript.toolTimeoutSeconds ?? 600) * 1000).toISOString();
    const requiredAction = { type: "submit_tool_outputs" as const, toolCalls, expiresAt };
    Object.assign(run, { phase: "requires_action", requiredAction, finishReason: null });
    for (const toolCall of toolCalls)
      publish(run.thread, {
        type: "run.tool_call",
        data: { runId: run.id, step: progress.step - 1, toolCall },
      });
    publish(run.thread, { type: "run.requires_action", data: { runId: run.id, requiredAction } });
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        if (!pauses.delete(run.id)) return;
        const finishedAt = new Date().toISOString();
        const error = `tool outputs were not submitted before ${expiresAt}`;
        const cost = costFor(usageFor(0, 0), 0);
        Object.assign(run, { status: "failed", error, cost, finishedAt, phase: null, requiredAction: null });
        publish(run.thread, { type: "run.failed", data: { runId: run.id, error, cost, finishedAt } });
      },
      (runScript.toolTimeoutSeconds ?? 600) * 1000,
    );
    timers.add(timer);
    pauses.set(run.id, { script: runScript, progress, timer });
  }

  /** The default step after tool outputs: the outputs as JSON text. */
  const echoOutputs = (outputs: ToolOutputs): FakeRunScript => ({
    tokens: [JSON.stringify(outputs.map((entry) => entry.output))],
  });

  /** POST /api/v1/promptruns/{id}/tool-outputs, with the real server's checks and messages. */
  async function submitToolOutputs(request: Request, run: PromptRun): Promise<Response> {
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return error(400, "invalid JSON", "invalid");
    }
    const parsed = submitToolOutputsRequestSchema.safeParse(body);
    if (!parsed.success) return error(400, parsed.error.issues[0]?.message ?? "invalid body", "invalid");
    const paused = pauses.get(run.id);
    if (!paused || run.status !== "pending")
      return error(
        409,
        run.status === "pending"
          ? `run is pending (phase ${run.phase}), not waiting for tool outputs`
          : `run is ${run.status}, not waiting for tool outputs`,
        "conflict",
      );
    const { toolOutputs } = parsed.data;
    const asked = paused.script.toolCalls ?? [];
    const given = toolOutputs.map((entry) => entry.toolCallId);
    const unknown = given.find((id) => !asked.some((call) => call.id === id));
    if (unknown) return error(400, `'${unknown}' is not a tool call the run waits for`, "invalid");
    if (new Set(given).size !== given.length) return error(400, "a toolCallId is repeated", "invalid");
    const missing = asked.filter((call) => !given.includes(call.id));
    if (missing.length > 0)
      return error(
        400,
        `toolOutputs: no output for ${missing.map((call) => `'${call.id}'`).join(", ")}`,
        "invalid",
      );
    pauses.delete(run.id);
    clearTimeout(paused.timer);
    timers.delete(paused.timer);
    toolOutputSubmissions.push({
      runId: run.id,
      toolOutputs,
      idempotencyKey: request.headers.get("idempotency-key"),
    });
    const step = paused.progress.step - 1;
    const results = asked.map((call) => ({
      toolCallId: call.id,
      name: call.name,
      output: toolOutputs.find((entry) => entry.toolCallId === call.id)?.output,
      isError: false,
      executedBy: "client" as const,
    }));
    run.steps = run.steps.map((each) => (each.index === step ? { ...each, toolResults: results } : each));
    // As the engine: a client's outputs are in the run's steps; no run.tool_result is sent for them.
    Object.assign(run, { phase: "running", requiredAction: null });
    const next = (paused.script.afterToolOutputs ?? echoOutputs)(toolOutputs);
    void execute(run, next, paused.progress);
    return json({ id: run.id, thread: run.thread }, 202, { location: `/api/v1/promptruns/${run.id}` });
  }

  function openStream(request: Request, thread: string, lastEventIdText: string | null): Response {
    const encoder = new TextEncoder();
    let subscriber: Subscriber | undefined;
    let ping: ReturnType<typeof setInterval> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        let open = true;
        const close = () => {
          if (!open) return;
          open = false;
          clearInterval(ping);
          if (subscriber) subscribers.delete(subscriber);
          controller.close();
        };
        subscriber = {
          thread,
          send(id, type, data) {
            if (open)
              controller.enqueue(
                encoder.encode(`id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`),
              );
          },
          close,
        };
        const events = history.get(thread) ?? [];
        // `ready` repeats the resume point, so a drop right after it still replays what follows.
        const readyId = lastEventIdText ?? String(events.at(-1)?.id ?? 0);
        subscriber.send(readyId, "ready", { thread });
        if (lastEventIdText !== null) {
          const after = Number(lastEventIdText);
          for (const { id, event } of events)
            if (id > after) subscriber.send(String(id), event.type, event.data);
        }
        subscribers.add(subscriber);
        ping = setInterval(() => {
          if (open) controller.enqueue(encoder.encode(": ping\n\n"));
        }, 2_000);
        request.signal.addEventListener("abort", close, { once: true });
      },
      cancel() {
        subscriber?.close();
      },
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
      },
    });
  }

  const server = Bun.serve({
    port: options.port ?? 0,
    hostname: "127.0.0.1",
    async fetch(request, bunServer): Promise<Response> {
      const response = await route(request, bunServer);
      // Browser-based tests (happy-dom, Chromium) call it from another origin.
      response.headers.set("access-control-allow-origin", "*");
      response.headers.set("access-control-expose-headers", "location, retry-after");
      return response;
    },
  });

  async function route(
    request: Request,
    bunServer: { timeout(request: Request, seconds: number): void },
  ): Promise<Response> {
    const url = new URL(request.url);
    if (request.method === "OPTIONS") {
      return new Response(null, {
        status: 204,
        headers: {
          "access-control-allow-methods": "GET, POST",
          "access-control-allow-headers": "authorization, content-type, last-event-id, idempotency-key",
          "access-control-max-age": "600",
        },
      });
    }
    const path = url.pathname;
    const authorized = request.headers.get("authorization") === `Bearer ${apiKey}`;

    if (path.startsWith("/__fake/")) return control(path, url);

    const streamMatch = path.match(/^\/stream\/([^/]+)$/);
    if (streamMatch && request.method === "GET") {
      const thread = streamMatch[1]!;
      const header = request.headers.get("authorization");
      const token = header?.startsWith("Bearer ") ? header.slice(7) : url.searchParams.get("token");
      const lastEventId = request.headers.get("last-event-id") ?? url.searchParams.get("lastEventId");
      const refuse = (status: number, message: string) => {
        connections.push({ thread, token, lastEventId, status });
        return error(status, message);
      };
      if (!isUuid(thread)) return refuse(404, "malformed thread id");
      if (failingConnections.count > 0) {
        failingConnections.count -= 1;
        return refuse(failingConnections.status, "unavailable");
      }
      const grant = token ? tokens.get(token) : undefined;
      if (!grant || grant.expiresAt <= Date.now())
        return refuse(401, "missing, invalid or expired stream token");
      if (grant.thread !== thread) return refuse(403, "token of another thread");
      connections.push({ thread, token, lastEventId, status: 200 });
      bunServer.timeout(request, 0);
      return openStream(request, thread, lastEventId);
    }

    if (!path.startsWith("/api/v1/")) return error(404, "not found", "not_found");
    if (!authorized) return error(401, "missing or invalid API key", "unauthorized");

    const tokenMatch = path.match(/^\/api\/v1\/threads\/([^/]+)\/stream-token$/);
    if (tokenMatch && request.method === "POST") {
      const thread = tokenMatch[1]!;
      if (!isUuid(thread)) return error(404, "malformed thread id", "not_found");
      const token = `st_${crypto.randomUUID()}`;
      const expiresAt = Date.now() + tokenTtlSeconds * 1000;
      tokens.set(token, { thread, expiresAt });
      return json({
        token,
        expiresAt: new Date(expiresAt).toISOString(),
        url: `${origin()}/stream/${thread}`,
      });
    }

    const createMatch = path.match(/^\/api\/v1\/prompts\/([^/]+)\/([^/]+)\/runs$/);
    if (createMatch && request.method === "POST") {
      let body: unknown;
      try {
        body = await request.json();
      } catch {
        return error(400, "invalid JSON", "invalid");
      }
      const parsed = createRunRequestSchema.safeParse(body);
      if (!parsed.success) return error(400, parsed.error.issues[0]?.message ?? "invalid body", "invalid");
      const slug = decodeURIComponent(createMatch[1]!);
      const version = decodeURIComponent(createMatch[2]!);
      const runRequest: FakeRunRequest = {
        slug,
        version,
        body: parsed.data,
        idempotencyKey: request.headers.get("idempotency-key"),
      };
      createdRuns.push(runRequest);
      const run = startRun(
        {
          thread: parsed.data.thread ?? crypto.randomUUID(),
          channel: parsed.data.channel ?? "default",
          priority: parsed.data.priority ?? "normal",
          environment: parsed.data.environment ?? "production",
          metadata: parsed.data.metadata ?? {},
          workflowRun: null,
        },
        slug,
        script(runRequest),
      );
      return json({ id: run.id, thread: run.thread }, 202, { location: `/api/v1/promptruns/${run.id}` });
    }

    const workflowAnswer = await workflows.route(request, url);
    if (workflowAnswer) return workflowAnswer;

    const runMatch = path.match(/^\/api\/v1\/promptruns\/([^/]+)(\/cancel|\/tool-outputs)?$/);
    if (runMatch) {
      const run = runs.get(runMatch[1]!);
      if (!run) return error(404, "run not found", "not_found");
      if (runMatch[2] === "/tool-outputs" && request.method === "POST")
        return submitToolOutputs(request, run);
      if (runMatch[2] === "/cancel" && request.method === "POST") {
        if (run.status !== "pending") return error(409, "run already ended", "conflict");
        cancelRun(run);
        return json(run);
      }
      if (!runMatch[2] && request.method === "GET") return json(run);
      return error(405, "method not allowed", "method_not_allowed");
    }
    return error(404, "not found", "not_found");
  }

  /** Stores a new pending run and executes its script. */
  function startRun(
    fields: Pick<PromptRun, "thread" | "channel" | "priority" | "environment" | "metadata" | "workflowRun">,
    slug: string,
    runScript: FakeRunScript,
  ): PromptRun {
    const run: PromptRun = {
      ...fields,
      id: crypto.randomUUID(),
      status: "pending",
      createdAt: new Date().toISOString(),
      finishedAt: null,
      output: null,
      error: null,
      tokenUsage: null,
      cost: null,
      prompt: { slug, version: 1, id: crypto.randomUUID() },
      startedAt: new Date().toISOString(),
      attempts: 1,
      outputJson: null,
      finishReason: null,
      phase: "running",
      requiredAction: null,
      steps: [],
      memory: null,
      retrieval: [],
      citations: [],
    };
    runs.set(run.id, run);
    void execute(run, runScript);
    return run;
  }

  /** Ends a pending run failed "cancelled" (its execution stops at the next token). */
  function cancelRun(run: PromptRun): void {
    cancelled.add(run.id);
    const paused = pauses.get(run.id);
    if (paused) clearTimeout(paused.timer);
    pauses.delete(run.id);
    const finishedAt = new Date().toISOString();
    const cost = costFor(usageFor(0, 0), 0);
    Object.assign(run, {
      status: "failed",
      error: "cancelled",
      cost,
      finishedAt,
      phase: null,
      requiredAction: null,
    });
    publish(run.thread, {
      type: "run.failed",
      data: { runId: run.id, error: "cancelled", cost, finishedAt },
    });
  }

  const workflows = createFakeWorkflowRuns(
    { publish, later, startRun, cancelRun },
    options.workflowScript ?? stepsFromInputs(script),
  );

  const origin = (): string => `http://127.0.0.1:${server.port}`;

  const dropStreams = (): number => {
    const open = [...subscribers];
    for (const subscriber of open) subscriber.close();
    return open.length;
  };
  const expireTokens = (expireOptions: { end?: boolean } = {}) => {
    for (const grant of tokens.values()) grant.expiresAt = 0;
    if (!expireOptions.end) return;
    for (const subscriber of [...subscribers]) {
      subscriber.send(String(history.get(subscriber.thread)?.at(-1)?.id ?? 0), "end", {
        reason: "token_expired",
      });
      subscriber.close();
    }
  };
  const failNextStreamConnections = (count: number, status: number) => {
    failingConnections = { count, status };
  };

  function control(path: string, url: URL): Response {
    if (path === "/__fake/drop-streams") return json({ dropped: dropStreams() });
    if (path === "/__fake/expire-tokens") {
      expireTokens({ end: url.searchParams.get("end") === "1" });
      return json({ ok: true });
    }
    if (path === "/__fake/fail-stream-connections") {
      failNextStreamConnections(
        Number(url.searchParams.get("count") ?? 1),
        Number(url.searchParams.get("status") ?? 503),
      );
      return json({ ok: true });
    }
    if (path === "/__fake/connections") return json(connections);
    if (path === "/__fake/open-streams") {
      const thread = url.searchParams.get("thread");
      return json({ open: [...subscribers].filter((s) => thread === null || s.thread === thread).length });
    }
    return error(404, "unknown control", "not_found");
  }

  return {
    url: origin(),
    apiKey,
    connections,
    createdRuns,
    toolOutputSubmissions,
    createdWorkflowRuns: workflows.createdWorkflowRuns,
    publish,
    openStreams: (thread) =>
      [...subscribers].filter((s) => thread === undefined || s.thread === thread).length,
    dropStreams,
    expireTokens,
    failNextStreamConnections,
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      dropStreams();
      await server.stop(true);
    },
  };
}
