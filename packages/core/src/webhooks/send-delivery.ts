import { Webhook } from "standardwebhooks";
import { PromptrunError } from "../errors.ts";

export interface SendResult {
  delivered: boolean;
  responseStatus: number | null;
  latencyMs: number;
  error: string | null;
}

const describeFailure = (error: unknown, timeoutMs: number): string => {
  if (error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return `timed out after ${timeoutMs} ms`;
  }
  if (PromptrunError.isInstance(error)) return error.message;
  if (error instanceof Error) {
    const code = (error as Error & { code?: unknown }).code;
    return typeof code === "string" && !error.message.includes(code)
      ? `${code}: ${error.message}`
      : error.message;
  }
  return String(error);
};

/**
 * One signed POST of a delivery (Standard Webhooks: `webhook-id` is the delivery id, the same on
 * every attempt; the signature covers `id.timestamp.body` with the attempt's timestamp). A 2xx
 * response delivers; any other status, a timeout or a network error is a failed attempt.
 */
export async function sendDelivery(input: {
  fetch: typeof fetch;
  url: string;
  secret: string;
  deliveryId: string;
  payload: string;
  attemptedAt: Date;
  timeoutMs: number;
}): Promise<SendResult> {
  let signature: string;
  try {
    signature = new Webhook(input.secret).sign(input.deliveryId, input.attemptedAt, input.payload);
  } catch {
    // Never echo the secret or the library's view of it.
    return { delivered: false, responseStatus: null, latencyMs: 0, error: "the webhook secret is malformed" };
  }
  const headers = {
    "content-type": "application/json",
    "user-agent": "Promptrun-Webhooks/1",
    "webhook-id": input.deliveryId,
    "webhook-timestamp": String(Math.floor(input.attemptedAt.getTime() / 1000)),
    "webhook-signature": signature,
  };
  const startedAt = performance.now();
  const latency = () => Math.round(performance.now() - startedAt);
  try {
    const response = await input.fetch(input.url, {
      method: "POST",
      headers,
      body: input.payload,
      signal: AbortSignal.timeout(input.timeoutMs),
    });
    const latencyMs = latency();
    // The body is not used; release the connection.
    await response.body?.cancel().catch(() => undefined);
    const delivered = response.status >= 200 && response.status < 300;
    return { delivered, responseStatus: response.status, latencyMs, error: null };
  } catch (error) {
    return {
      delivered: false,
      responseStatus: null,
      latencyMs: latency(),
      error: describeFailure(error, input.timeoutMs),
    };
  }
}
