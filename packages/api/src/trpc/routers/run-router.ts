import {
  type CreateRunResponse,
  type Page,
  type PromptRun,
  type RunMessages,
  runCreateInputSchema,
  runGetInputSchema,
  runListInputSchema,
  runSubmitToolOutputsInputSchema,
} from "@promptrun/contract";
import { notFound } from "@promptrun/core";
import type { TrpcContext } from "../context.ts";
import { idInputSchema } from "../inputs.ts";
import { type Procedures, requireTenant, type TrpcRoot } from "../root.ts";
import { verifyStreamTokenOfAnyThread } from "../stream-token-claims.ts";

/** With an API key: any run of the tenant. With a stream token: only runs of the token's thread. */
async function getRun(ctx: TrpcContext, id: string): Promise<PromptRun> {
  if (ctx.caller.kind !== "stream-token") return ctx.services.runs.get(requireTenant(ctx.caller).id, id);
  const claims = await verifyStreamTokenOfAnyThread(ctx.services.streamTokens, ctx.caller.token);
  const run = await ctx.services.runs.get(claims.tenantId, id);
  // Same answer as an unknown id: a token reveals nothing outside its thread.
  if (run.thread.toLowerCase() !== claims.threadId) throw notFound(`run '${id}' not found`);
  return run;
}

export function createRunRouter(t: TrpcRoot, { publicProcedure, tenantProcedure }: Procedures) {
  return t.router({
    /** Same checks and errors as POST /api/v1/prompts/{slug}/{version}/runs (the body goes to the same service). */
    create: tenantProcedure
      .input(runCreateInputSchema)
      .mutation(async ({ ctx, input }): Promise<CreateRunResponse> => {
        ctx.services.auth.requireActiveSubscription(ctx.tenant);
        const { slug, version, idempotencyKey, ...body } = input;
        const created = await ctx.services.runs.create(
          ctx.tenant,
          slug,
          version,
          body,
          idempotencyKey === undefined ? undefined : { idempotencyKey },
        );
        return { id: created.id, thread: created.thread };
      }),
    get: publicProcedure.input(runGetInputSchema).query(({ ctx, input }) => getRun(ctx, input.id)),
    /**
     * Same answer as GET /api/v1/promptruns/{id}/messages. An API key (or the console's session)
     * only: a stream token is refused, so a page holding one never sees the prompt's system messages.
     */
    messages: tenantProcedure
      .input(runGetInputSchema)
      .query(({ ctx, input }): Promise<RunMessages> => ctx.services.runs.messages(ctx.tenant.id, input.id)),
    list: tenantProcedure
      .input(runListInputSchema)
      .query(
        ({ ctx, input: { cursor, limit, ...filter } }): Promise<Page<PromptRun>> =>
          ctx.services.runs.list(ctx.tenant.id, filter, { cursor, limit }),
      ),
    cancel: tenantProcedure
      .input(idInputSchema)
      .mutation(({ ctx, input }): Promise<PromptRun> => ctx.services.runs.cancel(ctx.tenant.id, input.id)),
    /**
     * Same checks and errors as POST /api/v1/promptruns/{id}/tool-outputs. An API key only: a
     * stream token (what a browser holds) is refused, so a page cannot answer a run's tools.
     */
    submitToolOutputs: tenantProcedure
      .input(runSubmitToolOutputsInputSchema)
      .mutation(async ({ ctx, input }): Promise<CreateRunResponse> => {
        const { id, idempotencyKey, ...body } = input;
        const submitted = await ctx.services.runs.submitToolOutputs(
          ctx.tenant,
          id,
          body,
          idempotencyKey === undefined ? undefined : { idempotencyKey },
        );
        return { id: submitted.id, thread: submitted.thread };
      }),
  });
}
