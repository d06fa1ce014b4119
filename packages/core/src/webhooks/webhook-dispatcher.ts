import type { PromptrunConfig } from "../config.ts";
import type { Clock, RunRecord, Store, WebhookDeliveryRecord, WebhookRecord } from "../ports.ts";
import type { SecretBox } from "../security/secret-box.ts";
import { createGuardedFetch } from "../security/url-guard.ts";
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
    "allowPrivateUrls" | "webhookRetrySchedule" | "webhookDisableAfter" | "webhookTimeoutMs"
  >;
  secrets: SecretBox;
  clock: Clock;
  /** The transport under the address guard; tests and proxies inject one. */
  fetch?: typeof fetch;
  newId?: () => string;
  /** In [0, 1): retry jitter. */
  random?: () => number;
  pollIntervalMs?: number;
  /** Due deliveries read per poll. */
  batchSize?: number;
  /** Webhooks being sent to at once. */
  concurrency?: number;
  /** Store failures and the like; never called with secrets. */
  onError?: (error: unknown) => void;
  /** This process's name in delivery leases (default: a random id). */
  owner?: string;
}

const byCreation = (a: WebhookDeliveryRecord, b: WebhookDeliveryRecord) =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

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
 * Ordering: the deliveries of one webhook are sent one after another, oldest first, by a single
 * worker; a failed one is rescheduled and does not hold back the next (Standard Webhooks does not
 * promise order, and a receiver that is down must not stall newer events forever). Up to
 * `concurrency` webhooks are served at once.
 */
export function createWebhookDispatcher(dependencies: WebhookDispatcherDependencies): WebhookDispatcher {
  const { store, config, secrets, clock } = dependencies;
  const newId = dependencies.newId ?? (() => uuidv7());
  const random = dependencies.random ?? Math.random;
  const pollIntervalMs = dependencies.pollIntervalMs ?? 250;
  const batchSize = dependencies.batchSize ?? 200;
  const concurrency = dependencies.concurrency ?? 8;
  const onError = dependencies.onError ?? logError;
  const owner = dependencies.owner ?? newId();
  // Redirects are not followed (a redirected POST would lose its signed body): a 3xx with a
  // Location is a failed attempt ("too many redirects").
  const guardedFetch = createGuardedFetch({
    allowPrivate: config.allowPrivateUrls,
    maxRedirects: 0,
    ...(dependencies.fetch ? { fetch: dependencies.fetch } : {}),
  });

  let running = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let polling: Promise<void> | null = null;
  let pollAgain = false;
  /** webhookId → its worker */
  const workers = new Map<string, Promise<void>>();
  /**
   * A poll whose read began before a worker finished may still see that worker's deliveries as
   * due: webhookId → the last poll number started when its worker finished; such polls skip it.
   */
  let pollNumber = 0;
  const finishedDuringPoll = new Map<string, number>();

  const attemptOnce = async (webhook: WebhookRecord, delivery: WebhookDeliveryRecord, attemptedAt: Date) => {
    let secret: string;
    try {
      secret = secrets.decrypt(webhook.encryptedSecret);
    } catch {
      const error = "cannot decrypt the webhook secret (was PROMPTRUN_SECRET changed?)";
      return { delivered: false, responseStatus: null, latencyMs: 0, error } satisfies SendResult;
    }
    return sendDelivery({
      fetch: guardedFetch,
      url: webhook.url,
      secret,
      deliveryId: delivery.id,
      payload: delivery.payload,
      attemptedAt,
      timeoutMs: config.webhookTimeoutMs,
    });
  };

  const deliver = async (delivery: WebhookDeliveryRecord) => {
    // Several instances may read the same due delivery: only the one holding its lease sends it.
    // The lease outlasts a send (bounded by webhookTimeoutMs); recordAttempt frees it.
    const now = clock.now();
    const leaseUntil = new Date(now.getTime() + config.webhookTimeoutMs + DELIVERY_LEASE_MARGIN_MS);
    if (!(await store.webhooks.claimDelivery(delivery.id, owner, leaseUntil, now))) return;
    const attempt = delivery.attempts + 1;
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

  const work = async (deliveries: WebhookDeliveryRecord[]) => {
    for (const delivery of deliveries) {
      try {
        await deliver(delivery);
      } catch (error) {
        // Unrecorded: the delivery stays due and is tried again (at least once).
        onError(error);
      }
    }
  };

  const poll = async () => {
    const thisPoll = ++pollNumber;
    const due = await store.webhooks.dueDeliveries(clock.now(), batchSize);
    const groups = new Map<string, WebhookDeliveryRecord[]>();
    for (const delivery of [...due].sort(byCreation)) {
      const finishedAt = finishedDuringPoll.get(delivery.webhookId);
      if (workers.has(delivery.webhookId) || (finishedAt !== undefined && finishedAt >= thisPoll)) continue;
      const group = groups.get(delivery.webhookId) ?? [];
      group.push(delivery);
      groups.set(delivery.webhookId, group);
    }
    for (const [webhookId, finishedAt] of finishedDuringPoll) {
      if (finishedAt < thisPoll) finishedDuringPoll.delete(webhookId);
    }
    for (const [webhookId, deliveries] of groups) {
      if (workers.size >= concurrency) break;
      const worker = work(deliveries).finally(() => {
        workers.delete(webhookId);
        finishedDuringPoll.set(webhookId, pollNumber);
        wake();
      });
      workers.set(webhookId, worker);
    }
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
      await Promise.all(workers.values());
    },
    buildDeliveries: (run) => buildDeliveries({ store, clock, newId }, run),
    wake,
  };
}
