/**
 * Helpers of the workflow e2e suites (docs/WORKFLOWS.md): prompts and workflows pushed over REST,
 * workflow runs created, read and polled over REST, and each answer checked against the
 * contract's own schema (the one the REST layer and the OpenAPI document are built from).
 */
import { expect } from "bun:test";
import { type WorkflowRun, workflowRunSchema } from "@promptrun/contract";
import { api, type TestServer } from "./server.ts";

type Json = Record<string, unknown>;
type Caller = Pick<TestServer, "url" | "apiKey">;

/** A prompt whose user message is its one `text` input, on `model` (`openai:<name>` or `dev:echo`). */
export const textPrompt = (slug: string, model: string, extra: Json = {}) => ({
  slug,
  model,
  inputs: { text: { type: "string" } },
  messages: [{ role: "user", content: "{{text}}" }],
  ...extra,
});

/** A `json_schema` (strict) output: the run's `outputJson` is the parsed answer. */
export const jsonOutput = (name: string, properties: Record<string, Json>) => ({
  output: {
    format: "json_schema",
    name,
    strict: true,
    schema: {
      type: "object",
      properties,
      required: Object.keys(properties),
      additionalProperties: false,
    },
  },
});

/** POST /api/v1/prompts for each prompt; every push must succeed (201 new, 200 unchanged). */
export async function pushPromptsOverRest(server: Caller, prompts: Json[]): Promise<void> {
  for (const prompt of prompts) {
    const response = await api(server, "/api/v1/prompts", { method: "POST", json: prompt });
    expect([201, 200], `${prompt.slug}: ${await response.clone().text()}`).toContain(response.status);
  }
}

/** POST /api/v1/workflows with one workflow file as JSON: the raw answer. */
export const pushWorkflowRaw = (server: Caller, file: unknown) =>
  api(server, "/api/v1/workflows", { method: "POST", json: file });

export interface PushResult {
  slug: string;
  version: number;
  id: string;
  tags: string[];
  created: boolean;
}

/** Pushes a workflow file; 201 (new version) or 200 (unchanged) expected. */
export async function pushWorkflow(server: Caller, file: Json): Promise<PushResult> {
  const response = await pushWorkflowRaw(server, file);
  expect([201, 200], await response.clone().text()).toContain(response.status);
  const result = (await response.json()) as PushResult;
  expect(response.status).toBe(result.created ? 201 : 200);
  return result;
}

/** POST /api/v1/workflows/{slug}/{version}/runs: the raw answer. */
export function createWorkflowRunRaw(
  server: Caller,
  slug: string,
  body: unknown,
  options: { version?: string; idempotencyKey?: string; key?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = {};
  if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey;
  return api(server, `/api/v1/workflows/${slug}/${options.version ?? "latest"}/runs`, {
    method: "POST",
    json: body,
    headers,
    ...(options.key === undefined ? {} : { key: options.key }),
  });
}

/** Creates a workflow run; 202 `{id, thread}` expected. */
export async function createWorkflowRun(
  server: Caller,
  slug: string,
  body: Json,
  options: { version?: string; idempotencyKey?: string } = {},
): Promise<{ id: string; thread: string }> {
  const response = await createWorkflowRunRaw(server, slug, body, options);
  expect(response.status, await response.clone().text()).toBe(202);
  const created = (await response.json()) as { id: string; thread: string };
  expect(Object.keys(created).sort()).toEqual(["id", "thread"]);
  return created;
}

/** Checks a workflow run against the contract and the state rules of docs/WORKFLOWS.md "Runs". */
export function expectWellFormed(run: unknown): WorkflowRun {
  const parsed = workflowRunSchema.safeParse(run);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  const workflowRun = run as WorkflowRun;
  if (workflowRun.status === "pending") {
    expect(workflowRun.phase).not.toBeNull();
    expect([workflowRun.output, workflowRun.tokenUsage, workflowRun.cost]).toEqual([null, null, null]);
  } else {
    expect(workflowRun.phase).toBeNull();
    expect(workflowRun.finishedAt).not.toBeNull();
  }
  if (workflowRun.status === "failed") expect(workflowRun.error).toEqual(expect.any(String));
  return workflowRun;
}

/** GET /api/v1/workflowruns/{id}; 200 and a well-formed run expected. */
export async function getWorkflowRun(server: Caller, id: string): Promise<WorkflowRun> {
  const response = await api(server, `/api/v1/workflowruns/${id}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return expectWellFormed(await response.json());
}

/** Polls a workflow run until `done` holds (or throws after timeoutMs, showing the run). */
export async function waitForWorkflowRun(
  server: Caller,
  id: string,
  done: (run: WorkflowRun) => boolean = (run) => run.status !== "pending",
  what = "ended",
  timeoutMs = 30_000,
): Promise<WorkflowRun> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await getWorkflowRun(server, id);
    if (done(run)) return run;
    if (Date.now() > deadline) throw new Error(`workflow run ${id} never ${what}: ${JSON.stringify(run)}`);
    await Bun.sleep(25);
  }
}

/** The step `id` of a workflow run. */
export function stepOf(run: WorkflowRun, id: string): WorkflowRun["steps"][number] {
  const step = run.steps.find((candidate) => candidate.id === id);
  if (!step) throw new Error(`no step '${id}' in ${JSON.stringify(run.steps)}`);
  return step;
}

/** An `{error}` answer: its status and message. */
export async function refusal(response: Response): Promise<{ status: number; error: string }> {
  const text = await response.text();
  let body: { error?: unknown } = {};
  try {
    body = JSON.parse(text) as { error?: unknown };
  } catch {
    throw new Error(`not a JSON error body (${response.status}): ${text}`);
  }
  expect(typeof body.error, text).toBe("string");
  return { status: response.status, error: String(body.error) };
}
