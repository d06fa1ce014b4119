import {
  environmentNameSchema,
  type WebhookDeliveryAttempt,
  type WebhookEventType,
  webhookEventTypeSchema,
} from "@promptrun/contract";
import { z } from "zod";
import { DEFAULT_TENANT_QUOTAS, type PromptrunConfig } from "../config.ts";
import { conflict, invalid, notFound } from "../errors.ts";
import type { Clock, Store } from "../ports.ts";
import type { SecretBox } from "../security/secret-box.ts";
import { assertPublicUrl } from "../security/url-guard.ts";
import { createQuotaGuard } from "../services/tenant-quota.ts";
import { uuidv7 } from "../services/uuidv7.ts";
import type { WebhookService } from "../services.ts";
import { toWebhook } from "./to-webhook.ts";
import { generateWebhookSecret } from "./webhook-secret.ts";

export interface WebhookServiceDependencies {
  store: Pick<Store, "environments" | "webhooks">;
  config: Pick<PromptrunConfig, "allowPrivateUrls" | "maxWebhooksPerEnvironment"> &
    Partial<Pick<PromptrunConfig, "quotas">>;
  secrets: SecretBox;
  clock: Clock;
  newId?: () => string;
  /** Called after a redelivery is queued, so the dispatcher sends it without waiting for its next poll. */
  onRequeue?: () => void;
}

const ATTEMPTS_DEFAULT_LIMIT = 100;
const ATTEMPTS_MAX_LIMIT = 1_000;

const createInputSchema = z.object({
  environment: environmentNameSchema,
  url: z.string().max(2_048, "must be at most 2048 characters"),
  events: z.array(webhookEventTypeSchema).min(1, "must name at least one event").optional(),
});

const parseCreateInput = (input: unknown) => {
  const parsed = createInputSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw invalid(`${issue?.path.join(".") || "webhook"} ${issue?.message ?? "is invalid"}`);
};

/**
 * Tenant-scoped webhook management. The signing secret is generated here, stored encrypted and
 * returned once, at creation; nothing else ever returns it.
 */
export function createWebhookService(dependencies: WebhookServiceDependencies): WebhookService {
  const { store, config, secrets, clock } = dependencies;
  const newId = dependencies.newId ?? (() => uuidv7());
  const webhookQuota = createQuotaGuard("webhooks", (config.quotas ?? DEFAULT_TENANT_QUOTAS).webhooks);

  const owned = async (tenantId: string, id: string) => {
    const webhook = await store.webhooks.get(tenantId, id);
    if (!webhook) throw notFound(`webhook '${id}' not found`);
    return webhook;
  };

  return {
    async create(tenantId, input) {
      const { environment: environmentName, url: rawUrl, events } = parseCreateInput(input);
      const environment = await store.environments.get(tenantId, environmentName);
      if (!environment) throw invalid(`unknown environment '${environmentName}'`);
      const existing = await store.webhooks.listForEnvironment(environment.id);
      if (existing.length >= config.maxWebhooksPerEnvironment) {
        throw conflict(
          `environment '${environment.name}' already has ${existing.length} webhooks, the most allowed (${config.maxWebhooksPerEnvironment}); delete one first`,
        );
      }
      const url = await assertPublicUrl(rawUrl, { allowPrivate: config.allowPrivateUrls, field: "url" });
      const secret = generateWebhookSecret();
      const record = {
        id: newId(),
        tenantId,
        environmentId: environment.id,
        environment: environment.name,
        url: url.toString(),
        encryptedSecret: secrets.encrypt(secret),
        events: [...new Set<WebhookEventType>(events ?? ["run.completed", "run.failed"])],
        enabled: true,
        failureStreak: 0,
        createdAt: clock.now(),
      };
      await webhookQuota.exclusive(tenantId, async () => {
        webhookQuota.assertRoom((await store.webhooks.list(tenantId)).length);
        await store.webhooks.create(record);
      });
      return { webhook: toWebhook(record), secret };
    },

    async list(tenantId) {
      return (await store.webhooks.list(tenantId)).map(toWebhook);
    },

    async delete(tenantId, id) {
      if (!(await store.webhooks.delete(tenantId, id))) throw notFound(`webhook '${id}' not found`);
    },

    async setEnabled(tenantId, id, enabled) {
      await owned(tenantId, id);
      await store.webhooks.setEnabled(id, enabled);
      return toWebhook(await owned(tenantId, id));
    },

    async attempts(tenantId, filter): Promise<WebhookDeliveryAttempt[]> {
      if (filter.webhookId !== undefined) await owned(tenantId, filter.webhookId);
      const limit = Math.min(
        Math.max(Math.trunc(filter.limit ?? ATTEMPTS_DEFAULT_LIMIT), 1),
        ATTEMPTS_MAX_LIMIT,
      );
      const attempts = await store.webhooks.listAttempts(tenantId, {
        limit,
        ...(filter.webhookId !== undefined ? { webhookId: filter.webhookId } : {}),
        ...(filter.runId !== undefined ? { runId: filter.runId } : {}),
      });
      return attempts.map((attempt) => ({
        id: attempt.id,
        deliveryId: attempt.deliveryId,
        webhookId: attempt.webhookId,
        runId: attempt.runId,
        eventType: attempt.eventType,
        attempt: attempt.attempt,
        attemptedAt: attempt.attemptedAt.toISOString(),
        responseStatus: attempt.responseStatus,
        latencyMs: attempt.latencyMs,
        error: attempt.error,
      }));
    },

    async redeliver(tenantId, deliveryId) {
      const delivery = await store.webhooks.getDelivery(tenantId, deliveryId);
      if (!delivery) throw notFound(`delivery '${deliveryId}' not found`);
      const webhook = await store.webhooks.get(tenantId, delivery.webhookId);
      if (!webhook) throw conflict("the webhook of this delivery was deleted");
      if (!webhook.enabled) throw conflict("the webhook is disabled; enable it before redelivering");
      await store.webhooks.requeue(delivery.id, clock.now());
      dependencies.onRequeue?.();
    },
  };
}
