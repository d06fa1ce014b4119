/**
 * Test support only: a WorkflowService and a WorkflowRunService that keep workflows and runs in
 * maps per tenant, record every call and answer with contract-shaped values. The transports
 * (REST, tRPC) are tested against them; the real services are tested in core and end to end
 * (docs/WORKFLOWS.md).
 */
import {
  createWorkflowRunRequestSchema,
  isUuid,
  type Page,
  setWorkflowTagRequestSchema,
  tagSchema,
  type WorkflowPushResult,
  type WorkflowRun,
  type WorkflowSummary,
  type WorkflowVersion,
  workflowFileSchema,
} from "@promptrun/contract";
import {
  formatValidationError,
  invalid,
  notFound,
  PromptrunError,
  type PromptrunServices,
  uuidv7,
} from "@promptrun/core";
import type { z } from "zod";

type WorkflowService = PromptrunServices["workflows"];
type WorkflowRunService = PromptrunServices["workflowRuns"];

export interface RecordedWorkflowCall {
  method: `workflows.${keyof WorkflowService}` | `workflowRuns.${keyof WorkflowRunService}`;
  tenantId: string;
  args: unknown[];
}

export interface FakeWorkflowServices {
  workflows: WorkflowService;
  workflowRuns: WorkflowRunService;
  calls: RecordedWorkflowCall[];
  /** The next workflowRuns.create throws this (a 429, a 503…) before doing anything. */
  failNextCreate(error: PromptrunError): void;
  /** Ends a run as the engine would (completed, with an output). */
  complete(id: string, output: string): void;
}

interface Tenancy {
  versions: Map<string, WorkflowVersion[]>;
  tags: Map<string, Map<string, number>>;
  runs: Map<string, WorkflowRun>;
  idempotency: Map<string, { body: string; id: string }>;
}

const conflict = (message: string) => new PromptrunError("conflict", message);

function pageOf<T>(items: T[], cursor: string | null | undefined, limit: number): Page<T> {
  const start = cursor ? Number(cursor) : 0;
  if (!Number.isInteger(start) || start < 0) throw invalid("query.cursor: invalid cursor");
  const next = start + limit < items.length ? String(start + limit) : null;
  return { items: items.slice(start, start + limit), nextCursor: next };
}

function parsed<S extends z.ZodType>(schema: S, value: unknown, path: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalid(formatValidationError(result.error, path));
  return result.data;
}

const zeroCost = {
  success: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0, priced: true },
  retries: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 },
  total: 0,
};

function newRun(version: WorkflowVersion, request: z.infer<typeof createWorkflowRunRequestSchema>) {
  const run: WorkflowRun = {
    id: uuidv7(),
    status: "pending",
    phase: "queued",
    createdAt: new Date().toISOString(),
    startedAt: null,
    finishedAt: null,
    output: null,
    outputJson: null,
    error: null,
    tokenUsage: null,
    cost: null,
    thread: request.thread ?? crypto.randomUUID(),
    workflow: { slug: version.slug, version: version.version, id: version.id },
    priority: request.priority ?? "normal",
    environment: request.environment ?? "production",
    metadata: request.metadata ?? {},
    inputs: request.inputs ?? {},
    steps: version.steps.map((step) => ({
      id: step.id,
      kind: step.prompt === undefined ? "retrieve" : "prompt",
      status: "pending",
      runId: null,
      output: null,
      outputJson: null,
      error: null,
      startedAt: null,
      finishedAt: null,
    })),
  };
  return run;
}

// long-function: one factory of small closures over the same maps (each method is short).
export function createFakeWorkflowServices(): FakeWorkflowServices {
  const tenants = new Map<string, Tenancy>();
  const calls: RecordedWorkflowCall[] = [];
  let nextCreateError: PromptrunError | null = null;
  const tenancy = (tenantId: string): Tenancy => {
    const found = tenants.get(tenantId) ?? {
      versions: new Map(),
      tags: new Map(),
      runs: new Map(),
      idempotency: new Map(),
    };
    tenants.set(tenantId, found);
    return found;
  };
  const record = (method: RecordedWorkflowCall["method"], tenantId: string, ...args: unknown[]) =>
    calls.push({ method, tenantId, args });
  const versionsOf = (tenantId: string, slug: string): WorkflowVersion[] => {
    const found = tenancy(tenantId).versions.get(slug);
    if (found === undefined) throw notFound(`workflow '${slug}' not found`);
    return found;
  };
  const resolve = (tenantId: string, slug: string, segment: string): WorkflowVersion => {
    const versions = versionsOf(tenantId, slug);
    const number = /^\d+$/.test(segment)
      ? Number(segment)
      : segment === "latest"
        ? versions.length
        : tenancy(tenantId).tags.get(slug)?.get(segment);
    const found = isUuid(segment)
      ? versions.find((version) => version.id === segment)
      : versions.find((version) => version.version === number);
    if (found === undefined) throw notFound(`workflow '${slug}' has no version '${segment}'`);
    return found;
  };
  const pushOne = (tenantId: string, file: unknown): WorkflowPushResult => {
    const { slug, tags, ...definition } = parsed(workflowFileSchema, file, "body");
    const { versions } = tenancy(tenantId);
    const existing = versions.get(slug) ?? [];
    const hash = new Bun.CryptoHasher("sha256").update(JSON.stringify(definition)).digest("hex");
    const newest = existing.at(-1);
    const created = newest?.contentHash !== hash;
    const version: WorkflowVersion =
      newest !== undefined && !created
        ? newest
        : {
            id: uuidv7(),
            slug,
            version: existing.length + 1,
            description: definition.description ?? null,
            inputs: definition.inputs,
            steps: definition.steps,
            output: definition.output ?? null,
            tags: [],
            createdAt: new Date().toISOString(),
            contentHash: hash,
          };
    if (created) versions.set(slug, [...existing, version]);
    for (const tag of tags) moveTag(tenantId, slug, tag, version.version);
    return { slug, version: version.version, id: version.id, tags, created };
  };
  const moveTag = (tenantId: string, slug: string, tag: string, version: number) => {
    const { tags } = tenancy(tenantId);
    const moved = tags.get(slug) ?? new Map<string, number>();
    moved.set(tag, version);
    tags.set(slug, moved);
  };
  const tagsOf = (tenantId: string, version: WorkflowVersion): string[] =>
    [...(tenancy(tenantId).tags.get(version.slug) ?? new Map<string, number>())]
      .filter(([, number]) => number === version.version)
      .map(([tag]) => tag);
  const withTags = (tenantId: string, version: WorkflowVersion): WorkflowVersion => ({
    ...version,
    tags: tagsOf(tenantId, version),
  });
  const runOf = (tenantId: string, id: string): WorkflowRun => {
    const found = tenancy(tenantId).runs.get(id);
    if (found === undefined) throw notFound(`workflow run '${id}' not found`);
    return found;
  };

  const workflows: WorkflowService = {
    async push(tenantId, files) {
      record("workflows.push", tenantId, files);
      return files.map((file) => pushOne(tenantId, file));
    },
    async tag(tenantId, slug, tag, body) {
      record("workflows.tag", tenantId, slug, tag, body);
      const { version } = parsed(setWorkflowTagRequestSchema, body, "body");
      parsed(tagSchema, tag, "tag");
      const found = resolve(tenantId, slug, String(version));
      moveTag(tenantId, slug, tag, found.version);
      return { slug, version: found.version, id: found.id, tags: tagsOf(tenantId, found), created: false };
    },
    async get(tenantId, slug, segment) {
      record("workflows.get", tenantId, slug, segment);
      return withTags(tenantId, resolve(tenantId, slug, segment));
    },
    async list(tenantId, page) {
      record("workflows.list", tenantId, page);
      const summaries: WorkflowSummary[] = [...tenancy(tenantId).versions.values()].map((versions) => {
        const newest = versions.at(-1) as WorkflowVersion;
        const first = versions[0] as WorkflowVersion;
        return {
          id: first.id,
          slug: newest.slug,
          description: newest.description,
          latestVersion: newest.version,
          tags: Object.fromEntries(tenancy(tenantId).tags.get(newest.slug) ?? []),
          createdAt: first.createdAt,
          updatedAt: newest.createdAt,
        };
      });
      return pageOf(summaries, page.cursor, page.limit);
    },
    async versions(tenantId, slug, page) {
      record("workflows.versions", tenantId, slug, page);
      const newestFirst = [...versionsOf(tenantId, slug)].reverse();
      return pageOf(
        newestFirst.map((version) => withTags(tenantId, version)),
        page.cursor,
        page.limit,
      );
    },
  };

  const workflowRuns: WorkflowRunService = {
    async create(tenant, slug, segment, body, options) {
      record("workflowRuns.create", tenant.id, slug, segment, body, options);
      if (nextCreateError !== null) {
        const error = nextCreateError;
        nextCreateError = null;
        throw error;
      }
      const version = resolve(tenant.id, slug, segment);
      const request = parsed(createWorkflowRunRequestSchema, body, "body");
      const { idempotency, runs } = tenancy(tenant.id);
      const key = options?.idempotencyKey;
      const fingerprint = JSON.stringify([version.id, body]);
      const earlier = key === undefined ? undefined : idempotency.get(key);
      if (earlier !== undefined) {
        if (earlier.body !== fingerprint) throw conflict("Idempotency-Key reused with a different request");
        const run = runOf(tenant.id, earlier.id);
        return { id: run.id, thread: run.thread, replayed: true };
      }
      const run = newRun(version, request);
      runs.set(run.id, run);
      if (key !== undefined) idempotency.set(key, { body: fingerprint, id: run.id });
      return { id: run.id, thread: run.thread, replayed: false };
    },
    async get(tenantId, id) {
      record("workflowRuns.get", tenantId, id);
      return runOf(tenantId, id);
    },
    async list(tenantId, filter, page) {
      record("workflowRuns.list", tenantId, filter, page);
      const matching = [...tenancy(tenantId).runs.values()]
        .reverse()
        .filter(
          (run) =>
            (filter.workflow === undefined || run.workflow.slug === filter.workflow) &&
            (filter.version === undefined || run.workflow.version === filter.version) &&
            (filter.status === undefined || run.status === filter.status) &&
            (filter.thread === undefined || run.thread === filter.thread),
        );
      return pageOf(matching, page.cursor, page.limit);
    },
    async cancel(tenantId, id) {
      record("workflowRuns.cancel", tenantId, id);
      const run = runOf(tenantId, id);
      if (run.status !== "pending") throw conflict(`workflow run '${id}' has already ended`);
      const finishedAt = new Date().toISOString();
      const cancelled: WorkflowRun = {
        ...run,
        status: "failed",
        phase: null,
        error: "cancelled",
        finishedAt,
        cost: zeroCost,
        steps: run.steps.map((step) =>
          step.status === "pending" || step.status === "running"
            ? { ...step, status: "cancelled", finishedAt }
            : step,
        ),
      };
      tenancy(tenantId).runs.set(id, cancelled);
      return cancelled;
    },
  };

  return {
    workflows,
    workflowRuns,
    calls,
    failNextCreate(error) {
      nextCreateError = error;
    },
    complete(id, output) {
      for (const { runs } of tenants.values()) {
        const run = runs.get(id);
        if (run === undefined) continue;
        const finishedAt = new Date().toISOString();
        runs.set(id, {
          ...run,
          status: "completed",
          phase: null,
          output,
          startedAt: run.createdAt,
          finishedAt,
          tokenUsage: { input: 0, inputCached: 0, output: 0, reasoning: 0, total: 0 },
          cost: zeroCost,
          steps: run.steps.map((step) => ({ ...step, status: "completed", output, finishedAt })),
        });
      }
    },
  };
}
