import { subscriptionSetInputSchema, type Tenant, tenantCreateInputSchema } from "@promptrun/contract";
import { apiKeyRevokeInputSchema, tenantIdInputSchema } from "../inputs.ts";
import type { Procedures, TrpcRoot } from "../root.ts";

/** Operator-only tenant administration (the CLI's `tenants` and `keys` commands over tRPC). */
export function createAdminRouter(t: TrpcRoot, { operatorProcedure }: Procedures) {
  return t.router({
    tenant: t.router({
      create: operatorProcedure
        .input(tenantCreateInputSchema)
        .mutation(
          ({ ctx, input }): Promise<{ tenant: Tenant; apiKey: string }> =>
            ctx.services.tenants.create(input.name, { active: input.active }),
        ),
      list: operatorProcedure.query(({ ctx }): Promise<Tenant[]> => ctx.services.tenants.list()),
      setSubscription: operatorProcedure
        .input(subscriptionSetInputSchema)
        .mutation(
          ({ ctx, input }): Promise<Tenant> =>
            ctx.services.tenants.setSubscription(input.tenantId, input.active),
        ),
    }),
    key: t.router({
      create: operatorProcedure
        .input(tenantIdInputSchema)
        .mutation(({ ctx, input }) => ctx.services.tenants.createApiKey(input.tenantId)),
      revoke: operatorProcedure
        .input(apiKeyRevokeInputSchema)
        .mutation(({ ctx, input }) => ctx.services.tenants.revokeApiKey(input.key)),
    }),
  });
}
