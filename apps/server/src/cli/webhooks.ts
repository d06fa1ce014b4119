import { PromptrunError, WEBHOOK_EVENT_TYPES as WEBHOOK_EVENTS } from "@promptrun/core";
import { type CommandTable, forTenant, need, UsageError } from "./command.ts";

type WebhookEvent = "run.completed" | "run.failed" | "prompt.version.created" | "prompt.tag.moved";

const parseEvents = (value: string | undefined): WebhookEvent[] | undefined => {
  if (value === undefined) return undefined;
  const events = value.split(",").map((event) => event.trim());
  for (const event of events)
    if (!WEBHOOK_EVENTS.includes(event))
      throw new UsageError(`--events: '${event}' is not one of ${WEBHOOK_EVENTS.join(", ")}`);
  return events as WebhookEvent[];
};

/** The guard's message is for tenants; the operator running the CLI also learns the setting that lifts it. */
const withPrivateUrlHint = (error: unknown): never => {
  if (
    PromptrunError.isInstance(error) &&
    error.code === "invalid" &&
    /private or loopback/.test(error.message)
  )
    throw new PromptrunError(
      "invalid",
      `${error.message} (set PROMPTRUN_ALLOW_PRIVATE_URLS=true on the server and the CLI to allow private addresses, e.g. for local receivers)`,
    );
  throw error;
};

/** `webhooks …`: register webhooks, inspect and redeliver their deliveries. */
export const webhookCommands: CommandTable = {
  async "webhooks add"({ config, flags, args, print }) {
    const [tenantId, environment, url] = [
      need(args[0], "<tenantId>"),
      need(args[1], "<environment>"),
      need(args[2], "<url>"),
    ];
    const events = parseEvents(flags.events);
    const { webhook, secret } = await forTenant(config, tenantId, (services) =>
      services.webhooks
        .create(tenantId, { environment, url, ...(events ? { events } : {}) })
        .catch(withPrivateUrlHint),
    );
    print(
      { id: webhook.id, secret },
      `webhook ${webhook.id} → ${webhook.url}\nsigning secret (shown once): ${secret}`,
    );
  },

  async "webhooks list"({ config, args, print }) {
    const tenantId = need(args[0], "<tenantId>");
    const webhooks = await forTenant(config, tenantId, (services) => services.webhooks.list(tenantId));
    print(
      webhooks,
      webhooks
        .map((w) => `${w.id}  ${w.environment}  ${w.enabled ? "enabled " : "disabled"}  ${w.url}`)
        .join("\n"),
    );
  },

  async "webhooks attempts"({ config, flags, args, print }) {
    const tenantId = need(args[0], "<tenantId>");
    const attempts = await forTenant(config, tenantId, (services) =>
      services.webhooks.attempts(tenantId, {
        ...(flags.webhook ? { webhookId: flags.webhook } : {}),
        ...(flags.run ? { runId: flags.run } : {}),
      }),
    );
    print(
      attempts,
      attempts
        .map(
          (a) =>
            `${a.attemptedAt}  ${a.eventType}  #${a.attempt}  ${a.responseStatus ?? "-"}  ${a.latencyMs ?? "-"}ms  ${a.error ?? ""}  delivery ${a.deliveryId}`,
        )
        .join("\n"),
    );
  },

  async "webhooks redeliver"({ config, args, print }) {
    const [tenantId, deliveryId] = [need(args[0], "<tenantId>"), need(args[1], "<deliveryId>")];
    await forTenant(config, tenantId, (services) => services.webhooks.redeliver(tenantId, deliveryId));
    print({ redelivered: deliveryId }, `delivery ${deliveryId} queued again`);
  },
};
