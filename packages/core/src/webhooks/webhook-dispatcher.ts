import type { PromptrunConfig } from "../config.ts";
import type {
  Clock,
  RunRecord,
  Store,
  WebhookDeliveryRecord,
  WebhookDeliveryState,
  WebhookRecord,
} from "../ports.ts";
import type { SecretBox } from "../security/secret-box.ts";
import { createGuardedFetch, type ResolveHost } from "../security/url-guard.ts";
import { uuidv7 } from "../services/uuidv7.ts";
import { buildDeliveries } from "./build-deliveries.ts";
import { planNextAttempt } from "./plan-next-attempt.ts";
import { type SendResult, sendDelivery } from "./send-delivery.ts";

export interface WebhookDispatcher {
  /** Starts polling for due deliveries. */
  start(): void;
  /** Stops polling and waits for the sends in flight (each is bounded by webhookTimeoutMs). */
  stop(): Promise<void>;
  /** The outbox rows for a run that just ended (the engine stores them with the run's end). */
  buildDeliveries(run: RunRecord): Promise<WebhookDeliveryRecord[]>;
  /** Polls now instead of at the next interval (new deliveries, a redelivery). */
  wake(): void;
}

export interface WebhookDispatcherDependencies {
  store: Pick<Store, "environments" | "webhooks">;
  config: Pick<
    PromptrunConfig,
    | "allowPrivateUrls"
    | "webhookRetrySchedule"
    | "webhookDisableAfter"
    | "webhookTimeoutMs"
    | "webhookConcurrency"
    | "webhookTenantConcurrency"
  >;
  secrets: SecretBox;
  clock: Clock;
  /** The transport under the address guard; tests and proxies inject one. */
  fetch?: typeof fetch;
  /** Host name resolution for the address guard (tests inject one). */
  resolve?: ResolveHost;
  newId?: () => string;
  /** In [0, 1): retry jitter. */
  random?: () => number;
  pollIntervalMs?: number;
  /** Webhooks whose next due delivery is read per poll. */
  batchSize?: number;
  /** Store failures and the like; never called with secrets. */
  onError?: (error: unknown) => void;
  /** This process's name in delivery leases (default: a random id). */
  owner?: string;
}

/** A delivery lease lasts a send's timeout plus this (recording the attempt, a slow store). */
const DELIVERY_LEASE_MARGIN_MS = 30_000;

const logError = (error: unknown) =>
  console.error("webhook dispatcher:", error instanceof Error ? error.message : String(error));

/**
 * Sends the webhook outbox: at least once, signed per Standard Webhooks, with the configured retry
 * schedule. Everything lives in the store, so a restart resumes where the last process stopped (a
 * send that was in flight is due again once its lease lapses). Each send is leased first
 * (WebhookStore.claimDelivery): instances sharing a store never send one delivery at once.
 *
 * Fairness: a slot carries one attempt, then is handed out again. Free slots go round-robin over
 * the tenants with something due, each tenant at most `webhookTenantConcurrency` attempts in
 * flight and each webhook at most one (its deliveries go out one after another, oldest first; a
 * failed one is rescheduled and does not hold back the next). Each poll reads only the oldest due
 * delivery of each webhook, without bodies, so one tenant's backlog cannot fill the read either.
 * A receiver that never answers holds a slot for at most `webhookTimeoutMs`.
 */
export function createWebhookDispatcher(dependencies: WebhookDispatcherDependencies): WebhookDispatcher {
  const { store, config, secrets, clock } = dependencies;
  const newId = dependencies.newId ?? (() => uuidv7());
  const random = dependencies.random ?? Math.random;
  const pollIntervalMs = dependencies.pollIntervalMs ?? 250;
  const batchSize = dependencies.batchSize ?? 500;
  const onError = dependencies.onError ?? logError;
  const owner = dependencies.owner ?? newId();
  // Redirects are not followed (a redirected POST would lose its signed body): a 3xx with a
  // Location is a failed attempt ("too many redirects").
  const guardedFetch = createGuardedFetch({
    allowPrivate: config.allowPrivateUrls,
    maxRedirects: 0,
    ...(dependencies.fetch ? { fetch: dependencies.fetch } : {}),
    ...(dependencies.resolve ? { resolve: dependencies.resolve } : {}),
  });

  let running = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let polling: Promise<void> | null = null;
  let pollAgain = false;
  /** deliveryId → its attempt in flight */
  const inFlight = new Map<string, Promise<void>>();
  const webhooksInFlight = new Set<string>();
  const tenantsInFlight = new Map<string, number>();
  /** The tenant served last: the next round starts after it. */
  let lastTenant: string | null = null;

  const attemptOnce = async (
    webhook: WebhookRecord,
    delivery: WebhookDeliveryState,
    attemptedAt: Date,
  ): Promise<SendResult> => {
    let secret: string;
    try {
      secret = secrets.decrypt(webhook.encryptedSecret);
    } catch {
      const error = "cannot decrypt the webhook secret (was PROMPTRUN_SECRET changed?)";
      return { delivered: false, responseStatus: null, latencyMs: 0, error };
    }
    // The body is loaded only now: the outbox is read without it.
    const payload =
      delivery.eventId !== null
        ? await store.webhooks.getEventPayload(delivery.eventId)
        : delivery.runId !== null
          ? await store.webhooks.getPayload(delivery.runId, delivery.eventType)
          : null;
    if (payload === null) {
      return {
        delivered: false,
        responseStatus: null,
        latencyMs: 0,
        error: "the event's payload is missing",
      };
    }
    return sendDelivery({
      fetch: guardedFetch,
      url: webhook.url,
      secret,
      deliveryId: delivery.id,
      payload,
      attemptedAt,
      timeoutMs: config.webhookTimeoutMs,
    });
  };

  const deliver = async (delivery: WebhookDeliveryState) => {
    // Several instances may read the same due delivery: only the one holding its lease sends it.
    // The lease outlasts a send (bounded by webhookTimeoutMs); recordAttempt frees it.
    const now = clock.now();
    const leaseUntil = new Date(now.getTime() + config.webhookTimeoutMs + DELIVERY_LEASE_MARGIN_MS);
    if (!(await store.webhooks.claimDelivery(delivery.id, owner, leaseUntil, now))) return;
    // The poll's row may predate an attempt that ended meanwhile: count from the stored one.
    const current = await store.webhooks.getDelivery(delivery.tenantId, delivery.id);
    const attempt = (current?.attempts ?? delivery.attempts) + 1;
    // Read fresh each time: the previous delivery may have disabled it or moved its streak.
    const webhook = await store.webhooks.get(delivery.tenantId, delivery.webhookId);
    const attemptedAt = clock.now();
    if (!webhook?.enabled) {
      // Not sent; recorded so the attempt log says why. A redelivery after re-enabling sends it.
      await store.webhooks.recordAttempt(
        {
          id: newId(),
          deliveryId: delivery.id,
          attempt,
          attemptedAt,
          responseStatus: null,
          latencyMs: null,
          error: webhook ? "not sent: the webhook is disabled" : "not sent: the webhook was deleted",
        },
        { status: "failed", nextAttemptAt: null, failureStreak: webhook?.failureStreak ?? 0, disable: false },
      );
      return;
    }
    const result = await attemptOnce(webhook, delivery, attemptedAt);
    const outcome = planNextAttempt({
      delivered: result.delivered,
      attempt,
      retrySchedule: config.webhookRetrySchedule,
      failureStreak: webhook.failureStreak,
      disableAfter: config.webhookDisableAfter,
      now: clock.now(),
      random,
    });
    await store.webhooks.recordAttempt(
      {
        id: newId(),
        deliveryId: delivery.id,
        attempt,
        attemptedAt,
        responseStatus: result.responseStatus,
        latencyMs: result.latencyMs,
        error: result.error,
      },
      outcome,
    );
  };

  const launch = (delivery: WebhookDeliveryState) => {
    webhooksInFlight.add(delivery.webhookId);
    tenantsInFlight.set(delivery.tenantId, (tenantsInFlight.get(delivery.tenantId) ?? 0) + 1);
    const sending = deliver(delivery)
      // Unrecorded: the delivery stays due and is tried again (at least once).
      .catch(onError)
      .finally(() => {
        inFlight.delete(delivery.id);
        webhooksInFlight.delete(delivery.webhookId);
        const left = (tenantsInFlight.get(delivery.tenantId) ?? 1) - 1;
        if (left > 0) tenantsInFlight.set(delivery.tenantId, left);
        else tenantsInFlight.delete(delivery.tenantId);
        wake();
      });
    inFlight.set(delivery.id, sending);
  };

  /** Hands free slots round-robin over tenants, starting after the one served last. */
  const assignSlots = (due: WebhookDeliveryState[]) => {
    const byTenant = new Map<string, WebhookDeliveryState[]>();
    for (const delivery of due) {
      if (inFlight.has(delivery.id) || webhooksInFlight.has(delivery.webhookId)) continue;
      const queue = byTenant.get(delivery.tenantId) ?? [];
      // One per webhook: the store returns each webhook's oldest due delivery first.
      if (!queue.some((queued) => queued.webhookId === delivery.webhookId)) queue.push(delivery);
      byTenant.set(delivery.tenantId, queue);
    }
    const tenants = [...byTenant.keys()].sort();
    const after = lastTenant === null ? -1 : tenants.findIndex((tenant) => tenant > (lastTenant as string));
    const order = after <= 0 ? tenants : [...tenants.slice(after), ...tenants.slice(0, after)];
    let launched = true;
    while (launched && inFlight.size < config.webhookConcurrency) {
      launched = false;
      for (const tenant of order) {
        if (inFlight.size >= config.webhookConcurrency) break;
        if ((tenantsInFlight.get(tenant) ?? 0) >= config.webhookTenantConcurrency) continue;
        const next = byTenant.get(tenant)?.shift();
        if (!next) continue;
        launch(next);
        lastTenant = tenant;
        launched = true;
      }
    }
  };

  const poll = async () => {
    if (inFlight.size >= config.webhookConcurrency) return;
    assignSlots(await store.webhooks.dueDeliveries(clock.now(), batchSize, { perWebhook: 1 }));
  };

  const schedule = (delayMs: number) => {
    clearTimeout(timer);
    timer = setTimeout(runPoll, delayMs);
  };

  function runPoll() {
    timer = undefined;
    if (!running) return;
    if (polling) {
      pollAgain = true;
      return;
    }
    polling = poll()
      .catch(onError)
      .finally(() => {
        polling = null;
        if (!running) return;
        const delay = pollAgain ? 0 : pollIntervalMs;
        pollAgain = false;
        schedule(delay);
      });
  }

  function wake() {
    if (!running) return;
    if (polling) pollAgain = true;
    else schedule(0);
  }

  return {
    start() {
      if (running) return;
      running = true;
      schedule(0);
    },
    async stop() {
      running = false;
      clearTimeout(timer);
      timer = undefined;
      await polling;
      await Promise.all(inFlight.values());
    },
    buildDeliveries: (run) => buildDeliveries({ store, clock, newId }, run),
    wake,
  };
}
