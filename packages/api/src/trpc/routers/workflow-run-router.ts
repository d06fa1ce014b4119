import {
  type CreateRunResponse,
  createWorkflowRunInputSchema,
  IDEMPOTENCY_KEY_PATTERN,
  IDEMPOTENCY_KEY_RULE,
  isUuid,
  type Page,
  type WorkflowRun,
  workflowRunIdInputSchema,
  workflowRunListRequestSchema,
} from "@promptrun/contract";
import { invalid, notFound } from "@promptrun/core";
import type { TrpcContext } from "../context.ts";
import { type Procedures, requireTenant, type TrpcRoot } from "../root.ts";
import { verifyStreamTokenOfAnyThread } from "../stream-token-claims.ts";

/** A malformed id reads like an unknown one (404), as on REST. */
function requireWorkflowRunId(id: string): string {
  if (!isUuid(id)) throw notFound("workflow run not found");
  return id;
}

/** With an API key: any workflow run of the tenant. With a stream token: only those of its thread. */
async function getWorkflowRun(ctx: TrpcContext, id: string): Promise<WorkflowRun> {
  if (ctx.caller.kind !== "stream-token")
    return ctx.services.workflowRuns.get(requireTenant(ctx.caller).id, id);
  const claims = await verifyStreamTokenOfAnyThread(ctx.services.streamTokens, ctx.caller.token);
  const run = await ctx.services.workflowRuns.get(claims.tenantId, id);
  // Same answer as an unknown id: a token reveals nothing outside its thread.
  if (run.thread.toLowerCase() !== claims.threadId) throw notFound("workflow run not found");
  return run;
}

/** Workflow runs over tRPC (docs/WORKFLOWS.md "Runs"): the REST routes' services and errors. */
export function createWorkflowRunRouter(t: TrpcRoot, { publicProcedure, tenantProcedure }: Procedures) {
  return t.router({
    /** Same checks and errors as POST /api/v1/workflows/{slug}/{version}/runs. */
    create: tenantProcedure
      .input(createWorkflowRunInputSchema)
      .mutation(async ({ ctx, input }): Promise<CreateRunResponse> => {
        ctx.services.auth.requireActiveSubscription(ctx.tenant);
        const { slug, version, body, idempotencyKey } = input;
        if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey)) {
          // An unknown workflow (404) outranks a malformed key (400), as on REST.
          await ctx.services.workflows.get(ctx.tenant.id, slug, version);
          throw invalid(IDEMPOTENCY_KEY_RULE);
        }
        const options = idempotencyKey === undefined ? undefined : { idempotencyKey };
        const created = await ctx.services.workflowRuns.create(ctx.tenant, slug, version, body, options);
        return { id: created.id, thread: created.thread };
      }),
    get: publicProcedure
      .input(workflowRunIdInputSchema)
      .query(({ ctx, input }) => getWorkflowRun(ctx, requireWorkflowRunId(input.id))),
    list: tenantProcedure
      .input(workflowRunListRequestSchema)
      .query(
        ({ ctx, input: { cursor, limit, ...filter } }): Promise<Page<WorkflowRun>> =>
          ctx.services.workflowRuns.list(ctx.tenant.id, filter, { cursor: cursor ?? null, limit }),
      ),
    /** Same answer as POST /api/v1/workflowruns/{id}/cancel (no subscription needed). */
    cancel: tenantProcedure
      .input(workflowRunIdInputSchema)
      .mutation(
        ({ ctx, input }): Promise<WorkflowRun> =>
          ctx.services.workflowRuns.cancel(ctx.tenant.id, requireWorkflowRunId(input.id)),
      ),
  });
}
