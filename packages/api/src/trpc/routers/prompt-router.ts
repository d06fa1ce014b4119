import {
  type Page,
  type PromptSummary,
  type PromptVersion,
  type PushResult,
  promptGetInputSchema,
  promptListInputSchema,
  promptPushInputSchema,
  promptRenderInputSchema,
  promptSummaryInputSchema,
  promptTagInputSchema,
  promptVersionsInputSchema,
  type RenderedPrompt,
} from "@promptrun/contract";
import type { Procedures, TrpcRoot } from "../root.ts";

export function createPromptRouter(t: TrpcRoot, { tenantProcedure, subscribedProcedure }: Procedures) {
  return t.router({
    list: tenantProcedure
      .input(promptListInputSchema)
      .query(
        ({ ctx, input }): Promise<Page<PromptSummary>> => ctx.services.prompts.list(ctx.tenant.id, input),
      ),
    summary: tenantProcedure
      .input(promptSummaryInputSchema)
      .query(
        ({ ctx, input }): Promise<PromptSummary> => ctx.services.prompts.summary(ctx.tenant.id, input.slug),
      ),
    get: tenantProcedure
      .input(promptGetInputSchema)
      .query(
        ({ ctx, input }): Promise<PromptVersion> =>
          ctx.services.prompts.get(ctx.tenant.id, input.slug, input.version),
      ),
    versions: tenantProcedure
      .input(promptVersionsInputSchema)
      .query(
        ({ ctx, input: { slug, ...page } }): Promise<Page<PromptVersion>> =>
          ctx.services.prompts.versions(ctx.tenant.id, slug, page),
      ),
    /** Same checks and answer as POST /api/v1/prompts/{slug}/{version}/render (the same service). */
    render: tenantProcedure
      .input(promptRenderInputSchema)
      .mutation(
        ({ ctx, input: { slug, version, ...body } }): Promise<RenderedPrompt> =>
          ctx.services.runs.render(ctx.tenant.id, slug, version, body),
      ),
    push: subscribedProcedure
      .input(promptPushInputSchema)
      .mutation(
        ({ ctx, input }): Promise<PushResult[]> => ctx.services.prompts.push(ctx.tenant.id, input.files),
      ),
    tag: subscribedProcedure
      .input(promptTagInputSchema)
      .mutation(
        ({ ctx, input }): Promise<PushResult> =>
          ctx.services.prompts.tag(ctx.tenant.id, input.slug, input.version, input.tag),
      ),
  });
}
