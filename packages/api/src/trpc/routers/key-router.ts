import type { ApiKeySummary } from "@promptrun/contract";
import { notFound } from "@promptrun/core";
import { idInputSchema } from "../inputs.ts";
import type { Procedures, TrpcRoot } from "../root.ts";

/** The caller's own API keys. */
export function createKeyRouter(t: TrpcRoot, { tenantProcedure, subscribedProcedure }: Procedures) {
  return t.router({
    list: tenantProcedure.query(
      ({ ctx }): Promise<ApiKeySummary[]> => ctx.services.tenants.listApiKeys(ctx.tenant.id),
    ),
    /** The full key is returned once, here. */
    create: subscribedProcedure.mutation(
      ({ ctx }): Promise<{ apiKey: string; key: ApiKeySummary }> =>
        ctx.services.tenants.createApiKey(ctx.tenant.id),
    ),
    /** By id among the caller's keys; revocation then goes by the key's prefix, which the service only honours when unique. */
    revoke: tenantProcedure.input(idInputSchema).mutation(async ({ ctx, input }) => {
      const own = await ctx.services.tenants.listApiKeys(ctx.tenant.id);
      const key = own.find((candidate) => candidate.id === input.id && candidate.revokedAt === null);
      if (key === undefined) throw notFound(`no active API key '${input.id}'`);
      return ctx.services.tenants.revokeApiKey(key.prefix);
    }),
  });
}
