/**
 * A real webhook receiver on 127.0.0.1 (Bun.serve, port 0) that verifies each delivery's
 * Standard Webhooks signature with the secret `webhooks add` printed, as webhooks.test.ts does.
 */
import { Webhook } from "standardwebhooks";
import type { TestServer } from "./server.ts";

export interface ReceivedDelivery {
  /** The `webhook-id` header: the event id, the same on every redelivery of one event. */
  id: string;
  verified: boolean;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
}

export interface WebhookReceiver {
  url: string;
  /** Set after `webhooks add` printed it; deliveries are verified against it as they arrive. */
  secret: { value: string };
  received: ReceivedDelivery[];
  stop(): void;
}

export function startWebhookReceiver(): WebhookReceiver {
  const secret = { value: "" };
  const received: ReceivedDelivery[] = [];
  const receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = await request.text();
      const headers = Object.fromEntries(request.headers.entries());
      let verified = false;
      try {
        new Webhook(secret.value).verify(body, headers);
        verified = true;
      } catch {
        verified = false;
      }
      received.push({ id: headers["webhook-id"] ?? "", verified, payload: JSON.parse(body) });
      return new Response("ok");
    },
  });
  return {
    url: `http://127.0.0.1:${receiver.port}/hook`,
    secret,
    received,
    stop: () => receiver.stop(true),
  };
}

/** `promptrun webhooks add <tenant> <environment> <url> --events …`; keeps the secret for verifying. */
export async function addWebhook(
  server: TestServer,
  tenantId: string,
  receiver: WebhookReceiver,
  events: string[],
  environment = "production",
): Promise<void> {
  const added = await server.cli<{ secret: string }>(
    "webhooks",
    "add",
    tenantId,
    environment,
    receiver.url,
    "--events",
    events.join(","),
  );
  if (added.code !== 0) throw new Error(`webhooks add failed: ${added.stderr}`);
  receiver.secret.value = added.json.secret;
}
