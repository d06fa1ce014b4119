/**
 * POST /workflows/{slug}/{version}/runs (docs/WORKFLOWS.md "Runs"): create-run's checks in
 * create-run's order, then the run is inserted with every prompt reference pinned.
 */
import {
  createWorkflowRunRequestSchema,
  IDEMPOTENCY_KEY_PATTERN,
  IDEMPOTENCY_KEY_RULE,
} from "@promptrun/contract";
import { conflict, forbidden, invalid, notFound, PromptrunError, rateLimited } from "../../errors.ts";
import { checkMediaInputs } from "../../inputs/media-input.ts";
import type { IdempotencyRecord, TenantRecord } from "../../ports.ts";
import { createRequestFingerprint } from "../../security/request-fingerprint.ts";
import { formatValidationError } from "../../services/format-validation-error.ts";
import { parseVersionSegment } from "../../services/parse-version-segment.ts";
import { requireRunEnvironment } from "../../services/run-request-checks.ts";
import type { CreateRunOptions } from "../../services.ts";
import { validateInputs } from "../../templating/template.ts";
import { compileWorkflow } from "../graph.ts";
import type { NewWorkflowRun, WorkflowVersionRecord } from "../ports.ts";
import type { WorkflowRunContext } from "./workflow-run-context.ts";

const REUSED_KEY = "Idempotency-Key reused with a different request";

const pendingCapReached = (limit: number) =>
  rateLimited(`too many pending runs (limit ${limit}); retry when some have finished`, 1);

/** The workflow version a segment names; 404 naming what is missing. */
async function resolveWorkflowVersion(
  context: WorkflowRunContext,
  tenantId: string,
  slug: string,
  versionSegment: string,
): Promise<WorkflowVersionRecord> {
  const { store } = context.deps;
  const selector = parseVersionSegment(versionSegment);
  const version = await store.workflows.resolveVersion(tenantId, slug, selector);
  if (version) return version;
  if (!(await store.workflows.getWorkflow(tenantId, slug))) throw notFound(`workflow '${slug}' not found`);
  throw notFound(`workflow '${slug}' has no version '${versionSegment}'`);
}

/** Step id → the prompt version id each prompt step's reference resolves to now; 400 when one does not. */
async function pinPrompts(
  context: WorkflowRunContext,
  tenantId: string,
  version: WorkflowVersionRecord,
): Promise<Record<string, string>> {
  const graph = compileWorkflow(version.definition);
  const pinned: Record<string, string> = {};
  for (const step of graph.steps) {
    if (!step.prompt) continue;
    const prompt = await context.deps.store.prompts.resolveVersion(
      tenantId,
      step.prompt.slug,
      step.prompt.selector,
    );
    if (!prompt)
      throw invalid(
        `steps[${step.index}].prompt: '${step.definition.prompt}' does not resolve to a prompt version`,
      );
    pinned[step.id] = prompt.id;
  }
  return pinned;
}

export type CreateWorkflowRun = (
  tenant: TenantRecord,
  slug: string,
  versionSegment: string,
  body: unknown,
  options?: CreateRunOptions,
) => Promise<{ id: string; thread: string; replayed: boolean }>;

/** `onCreated` runs after the insert committed (workflow.started, the first advance). */
export function createWorkflowRunCreate(
  context: WorkflowRunContext,
  onCreated: (run: NewWorkflowRun) => void,
): CreateWorkflowRun {
  const { deps } = context;
  const { store, config, clock } = deps;
  const fingerprint = createRequestFingerprint(config.secret, config.previousSecrets);
  const replay = (record: IdempotencyRecord, fingerprinted: unknown) => {
    if (!fingerprint.matches(record.requestHash, fingerprinted)) throw conflict(REUSED_KEY);
    return { id: record.runId, thread: record.threadId, replayed: true };
  };

  // long-function: create-run's checks in their documented order (docs/PRODUCT-RULES.md), one sequence.
  return async (tenant, slug, versionSegment, body, options) => {
    if (!tenant.subscriptionActive) throw forbidden("no active subscription");
    const version = await resolveWorkflowVersion(context, tenant.id, slug, versionSegment);
    const parsed = createWorkflowRunRequestSchema.safeParse(body);
    if (!parsed.success) throw invalid(formatValidationError(parsed.error));
    const request = parsed.data;
    const inputs = validateInputs(version.definition.inputs, request.inputs);
    const environment = (await requireRunEnvironment(store, tenant.id, request.environment)).name;
    const idempotencyKey = options?.idempotencyKey;
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey))
      throw invalid(IDEMPOTENCY_KEY_RULE);
    await deps.rateLimits.take(tenant.id, "runs.create");
    await checkMediaInputs(version.definition.inputs, inputs, { allowPrivateUrls: config.allowPrivateUrls });

    const now = clock.now();
    const notBefore = new Date(now.getTime() - config.idempotencyTtlSeconds * 1000);
    const fingerprinted = { workflow: slug, version: versionSegment, request };
    const requestHash = idempotencyKey === undefined ? "" : fingerprint.of(fingerprinted);
    if (idempotencyKey !== undefined) {
      const existing = await store.workflows.findIdempotency(tenant.id, idempotencyKey, notBefore);
      if (existing) return replay(existing, fingerprinted);
    }
    // The tenant's pending cap, as create-run's: a workflow run is admitted while its tenant has room
    // for one more pending run. Only its step runs are pending runs (counted by the next recount),
    // so the place is handed back at once.
    const reservation = await deps.pendingRuns.reserve(tenant.id, config.maxPendingRunsPerTenant);
    if (reservation === null) throw pendingCapReached(config.maxPendingRunsPerTenant);
    reservation.abandoned();
    const promptVersions = await pinPrompts(context, tenant.id, version);
    const envVars = request.envVars;
    const hasEnvVars = envVars !== undefined && Object.keys(envVars).length > 0;
    const run: NewWorkflowRun = {
      id: deps.newId(),
      tenantId: tenant.id,
      workflowId: version.workflowId,
      workflowVersionId: version.id,
      workflowSlug: version.slug,
      workflowVersion: version.version,
      threadId: request.thread?.toLowerCase() ?? deps.newId(),
      priority: request.priority ?? "normal",
      environment,
      inputs,
      metadata: request.metadata ?? {},
      encryptedEnvVars: hasEnvVars ? deps.secrets.encryptJson(envVars) : null,
      promptVersions,
      createdAt: now,
      steps: version.definition.steps.map((step) => ({
        id: step.id,
        status: "pending",
        runId: null,
        output: null,
        outputJson: null,
        error: null,
        startedAt: null,
        finishedAt: null,
      })),
    };
    const idempotency: IdempotencyRecord | undefined =
      idempotencyKey === undefined
        ? undefined
        : {
            tenantId: tenant.id,
            key: idempotencyKey,
            requestHash,
            runId: run.id,
            threadId: run.threadId,
            createdAt: now,
          };
    try {
      await store.workflows.createRun(run, idempotency, { idempotencyExpiredBefore: notBefore });
    } catch (error) {
      // A concurrent request with the same key won the race: answer as its replay.
      if (idempotencyKey !== undefined && PromptrunError.isInstance(error) && error.code === "conflict") {
        const winner = await store.workflows.findIdempotency(tenant.id, idempotencyKey, notBefore);
        if (winner) return replay(winner, fingerprinted);
      }
      throw error;
    }
    onCreated(run);
    return { id: run.id, thread: run.threadId, replayed: false };
  };
}
