import { type Webhook, type WebhookDeliveryAttempt, webhookCreateInputSchema } from "@promptrun/contract";
import {
  idInputSchema,
  webhookAttemptsInputSchema,
  webhookRedeliverInputSchema,
  webhookSetEnabledInputSchema,
} from "../inputs.ts";
import type { Procedures, TrpcRoot } from "../root.ts";

export function createWebhookRouter(t: TrpcRoot, { tenantProcedure, subscribedProcedure }: Procedures) {
  return t.router({
    /** The `whsec_…` secret is returned once, here. */
    create: subscribedProcedure
      .input(webhookCreateInputSchema)
      .mutation(
        ({ ctx, input }): Promise<{ webhook: Webhook; secret: string }> =>
          ctx.services.webhooks.create(ctx.tenant.id, input),
      ),
    list: tenantProcedure.query(({ ctx }): Promise<Webhook[]> => ctx.services.webhooks.list(ctx.tenant.id)),
    delete: tenantProcedure.input(idInputSchema).mutation(async ({ ctx, input }) => {
      await ctx.services.webhooks.delete(ctx.tenant.id, input.id);
      return { deleted: true as const };
    }),
    attempts: tenantProcedure
      .input(webhookAttemptsInputSchema)
      .query(
        ({ ctx, input }): Promise<WebhookDeliveryAttempt[]> =>
          ctx.services.webhooks.attempts(ctx.tenant.id, input),
      ),
    redeliver: subscribedProcedure.input(webhookRedeliverInputSchema).mutation(async ({ ctx, input }) => {
      await ctx.services.webhooks.redeliver(ctx.tenant.id, input.deliveryId);
      return { requeued: true as const };
    }),
    setEnabled: subscribedProcedure
      .input(webhookSetEnabledInputSchema)
      .mutation(
        ({ ctx, input }): Promise<Webhook> =>
          ctx.services.webhooks.setEnabled(ctx.tenant.id, input.id, input.enabled),
      ),
  });
}
