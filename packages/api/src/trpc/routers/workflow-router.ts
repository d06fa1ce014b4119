import {
  type Page,
  pageRequestSchema,
  type WorkflowPushResult,
  type WorkflowSummary,
  type WorkflowVersion,
  workflowTagInputSchema,
  workflowVersionInputSchema,
} from "@promptrun/contract";
import { workflowPushInputSchema, workflowVersionsInputSchema } from "../inputs.ts";
import type { Procedures, TrpcRoot } from "../root.ts";

/**
 * Workflow definitions over tRPC (docs/WORKFLOWS.md "Workflow files"): the same services and
 * errors as the REST routes. Pushes and tags need an active subscription; reads do not.
 */
export function createWorkflowRouter(t: TrpcRoot, { tenantProcedure, subscribedProcedure }: Procedures) {
  return t.router({
    push: subscribedProcedure
      .input(workflowPushInputSchema)
      .mutation(
        ({ ctx, input }): Promise<WorkflowPushResult[]> =>
          ctx.services.workflows.push(ctx.tenant.id, input.files),
      ),
    list: tenantProcedure
      .input(pageRequestSchema)
      .query(
        ({ ctx, input }): Promise<Page<WorkflowSummary>> => ctx.services.workflows.list(ctx.tenant.id, input),
      ),
    versions: tenantProcedure
      .input(workflowVersionsInputSchema)
      .query(
        ({ ctx, input: { slug, ...page } }): Promise<Page<WorkflowVersion>> =>
          ctx.services.workflows.versions(ctx.tenant.id, slug, page),
      ),
    /** `version`: a number, a tag, `latest` or an id, as in GET /api/v1/workflows/{slug}/{version}. */
    get: tenantProcedure
      .input(workflowVersionInputSchema)
      .query(
        ({ ctx, input }): Promise<WorkflowVersion> =>
          ctx.services.workflows.get(ctx.tenant.id, input.slug, input.version),
      ),
    /** Same checks and answer as PUT /api/v1/workflows/{slug}/tags/{tag}. */
    tag: subscribedProcedure
      .input(workflowTagInputSchema)
      .mutation(
        ({ ctx, input: { slug, tag, version } }): Promise<WorkflowPushResult> =>
          ctx.services.workflows.tag(ctx.tenant.id, slug, tag, { version }),
      ),
  });
}
