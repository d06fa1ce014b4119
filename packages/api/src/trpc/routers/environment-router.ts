import { type Environment, envVarsSetInputSchema, envVarsUnsetInputSchema } from "@promptrun/contract";
import type { Procedures, TrpcRoot } from "../root.ts";

export function createEnvironmentRouter(t: TrpcRoot, { tenantProcedure, subscribedProcedure }: Procedures) {
  return t.router({
    list: tenantProcedure.query(
      ({ ctx }): Promise<Environment[]> => ctx.services.environments.list(ctx.tenant.id),
    ),
    /** Creates the environment when new (like `promptrun envs set`). */
    set: subscribedProcedure
      .input(envVarsSetInputSchema)
      .mutation(
        ({ ctx, input }): Promise<Environment> =>
          ctx.services.environments.setEnvVars(ctx.tenant.id, input.environment, input.values),
      ),
    unset: tenantProcedure
      .input(envVarsUnsetInputSchema)
      .mutation(
        ({ ctx, input }): Promise<Environment> =>
          ctx.services.environments.unsetEnvVars(ctx.tenant.id, input.environment, input.keys),
      ),
  });
}
