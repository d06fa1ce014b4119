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
  promptTagHistoryInputSchema,
  promptTagInputSchema,
  promptUntagInputSchema,
  promptVersionsInputSchema,
  type RenderedPrompt,
  type TagHistoryEntry,
} from "@promptrun/contract";
import { movedByOf } from "@promptrun/core";
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
        ({ ctx, input }): Promise<PushResult[]> =>
          ctx.services.prompts.push(ctx.tenant.id, input.files, movedByOf(ctx.tenant)),
      ),
    /** Without expectedVersion as before; with it, the guarded move of PUT /api/v1/prompts/{slug}/tags/{tag}. */
    tag: subscribedProcedure
      .input(promptTagInputSchema)
      .mutation(async ({ ctx, input }): Promise<PushResult> => {
        const { slug, version, tag, expectedVersion } = input;
        if (expectedVersion === undefined)
          return ctx.services.prompts.tag(ctx.tenant.id, slug, version, tag, movedByOf(ctx.tenant));
        const body = { version: /^[1-9][0-9]*$/.test(version) ? Number(version) : version, expectedVersion };
        const moved = await ctx.services.prompts.moveTag(
          ctx.tenant.id,
          slug,
          tag,
          body,
          movedByOf(ctx.tenant),
        );
        const found = await ctx.services.prompts.get(ctx.tenant.id, slug, String(moved.version));
        return { slug, version: found.version, id: found.id, tags: found.tags, created: false };
      }),
    /** Same checks and answer as DELETE /api/v1/prompts/{slug}/tags/{tag}; returns where the tag pointed. */
    /** Same answer as GET /api/v1/prompts/{slug}/tags/{tag}/history. */
    tagHistory: tenantProcedure
      .input(promptTagHistoryInputSchema)
      .query(
        ({ ctx, input: { slug, tag, ...page } }): Promise<Page<TagHistoryEntry>> =>
          ctx.services.prompts.tagHistory(ctx.tenant.id, slug, tag, page),
      ),
    untag: subscribedProcedure.input(promptUntagInputSchema).mutation(
      async ({ ctx, input }): Promise<{ slug: string; tag: string; previousVersion: number }> => ({
        ...input,
        previousVersion: await ctx.services.prompts.deleteTag(
          ctx.tenant.id,
          input.slug,
          input.tag,
          movedByOf(ctx.tenant),
        ),
      }),
    ),
  });
}
