import type { ApiKeySummary } from "@promptrun/contract";
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
    /** By id, among the caller's own active keys. */
    revoke: tenantProcedure
      .input(idInputSchema)
      .mutation(({ ctx, input }) => ctx.services.tenants.revokeOwnApiKey(ctx.tenant.id, input.id)),
  });
}
