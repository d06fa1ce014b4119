import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { createGuardedFetch } from "../security/url-guard.ts";
import { sendDelivery } from "./send-delivery.ts";
import { type Receiver, startReceiver } from "./test-support.ts";
import { generateWebhookSecret } from "./webhook-secret.ts";

let receiver: Receiver;
beforeEach(() => {
  receiver = startReceiver();
});
afterEach(() => receiver.stop());

const send = (overrides: { secret?: string; fetch?: typeof fetch } = {}) =>
  sendDelivery({
    fetch: overrides.fetch ?? fetch,
    url: receiver.url(),
    secret: overrides.secret ?? generateWebhookSecret(),
    deliveryId: "3f1c2b7e-8d4a-4c1e-9b2a-1d2e3f4a5b6c",
    payload: '{"type":"run.completed"}',
    attemptedAt: new Date(),
    timeoutMs: 2_000,
  });

describe("sendDelivery", () => {
  test("signs id, attempt timestamp and body so the receiver's library verifies them", async () => {
    const secret = generateWebhookSecret();
    expect(await send({ secret })).toMatchObject({ delivered: true, responseStatus: 200, error: null });
    const [request] = receiver.requests;
    expect(request!.headers["webhook-timestamp"]).toMatch(/^\d{10}$/);
    expect(new Webhook(secret).verify(request!.body, request!.headers)).toEqual({ type: "run.completed" });
  });

  test("a non-2xx status is a failed attempt carrying the status", async () => {
    receiver.reply("/hook", 410);
    expect(await send()).toMatchObject({ delivered: false, responseStatus: 410, error: null });
  });

  test("through the guarded fetch without redirects, a redirect is not followed", async () => {
    receiver.reply("/hook", { status: 307, headers: { location: receiver.url("/elsewhere") } });
    const guarded = createGuardedFetch({ allowPrivate: true, maxRedirects: 0 });
    const result = await send({ fetch: guarded });
    expect(result.delivered).toBe(false);
    expect(result.error).toBe("too many redirects");
    expect(receiver.requests.map((request) => request.path)).toEqual(["/hook"]);
  });

  test("a malformed secret fails the attempt without sending or echoing it", async () => {
    const result = await send({ secret: "whsec_***not-base64***" });
    expect(result).toEqual({
      delivered: false,
      responseStatus: null,
      latencyMs: 0,
      error: "the webhook secret is malformed",
    });
    expect(receiver.requests).toHaveLength(0);
  });
});
