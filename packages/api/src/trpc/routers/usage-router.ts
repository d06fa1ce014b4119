import { type UsageResponse, usageRequestSchema } from "@promptrun/contract";
import type { Procedures, TrpcRoot } from "../root.ts";

/** usage.get: the same report as GET /api/v1/usage, over the same service. */
export function createUsageRouter(t: TrpcRoot, { tenantProcedure }: Procedures) {
  return t.router({
    get: tenantProcedure
      .input(usageRequestSchema)
      .query(({ ctx, input }): Promise<UsageResponse> => ctx.services.runs.usage(ctx.tenant.id, input)),
  });
}
