import type { Webhook, WebhookDeliveryAttempt } from "@promptrun/contract";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "wouter";
import { useTRPC } from "../api/trpc.ts";
import { LocalTime } from "../components/local-time.tsx";
import { ErrorNotice } from "../components/notice.tsx";

/** The newest attempts read per webhook (the API's attempts log, newest first). */
const ATTEMPTS_LIMIT = 100;
const POLL_MS = 5_000;
/** While a redelivery is awaited, its outcome is looked for this often. */
const REDELIVERY_POLL_MS = 1_000;

interface Delivery {
  id: string;
  eventType: WebhookDeliveryAttempt["eventType"];
  runId: string | null;
  /** Oldest first. */
  attempts: WebhookDeliveryAttempt[];
}

/** Attempts grouped by delivery, the delivery with the newest attempt first. */
const groupByDelivery = (attempts: WebhookDeliveryAttempt[]): Delivery[] => {
  const byId = new Map<string, Delivery>();
  for (const attempt of attempts) {
    const delivery = byId.get(attempt.deliveryId) ?? {
      id: attempt.deliveryId,
      eventType: attempt.eventType,
      runId: attempt.runId,
      attempts: [],
    };
    delivery.attempts.unshift(attempt);
    byId.set(attempt.deliveryId, delivery);
  }
  return [...byId.values()];
};

const succeeded = (attempt: WebhookDeliveryAttempt) =>
  attempt.error === null &&
  attempt.responseStatus !== null &&
  attempt.responseStatus >= 200 &&
  attempt.responseStatus < 300;

const lastAttemptNumber = (delivery: Delivery): number => delivery.attempts.at(-1)?.attempt ?? 0;

/** A redelivery was asked for when the delivery's last attempt was number `lastBefore`, and none came since. */
const isAwaited = (delivery: Delivery, lastBefore: number | undefined) =>
  lastBefore !== undefined && lastAttemptNumber(delivery) <= lastBefore;

const describeAttempt = (attempt: WebhookDeliveryAttempt): string => {
  const code = attempt.responseStatus === null ? "no response" : `HTTP ${attempt.responseStatus}`;
  const latency = attempt.latencyMs === null ? "" : ` in ${Math.round(attempt.latencyMs)} ms`;
  if (succeeded(attempt)) return `Delivered: ${code}${latency}.`;
  return `Failed: ${code}${latency}${attempt.error ? ` (${attempt.error})` : ""}.`;
};

/** The webhook's deliveries with every attempt, and a redeliver action per delivery. */
export function WebhookDeliveries({ webhook }: { webhook: Webhook }) {
  const trpc = useTRPC();
  /** deliveryId → the number of its last attempt when its redelivery was asked for. */
  const [awaiting, setAwaiting] = useState<Record<string, number>>({});
  const attempts = useQuery({
    ...trpc.webhook.attempts.queryOptions({ webhookId: webhook.id, limit: ATTEMPTS_LIMIT }),
    refetchInterval: (query) => {
      const waiting = groupByDelivery(query.state.data ?? []).some((delivery) =>
        isAwaited(delivery, awaiting[delivery.id]),
      );
      return waiting ? REDELIVERY_POLL_MS : POLL_MS;
    },
  });
  const headingId = `deliveries-${webhook.id}`;
  const deliveries = attempts.data ? groupByDelivery(attempts.data) : [];
  return (
    <section aria-labelledby={headingId} className="webhook-deliveries">
      <h4 id={headingId}>Deliveries</h4>
      {attempts.isPending && <p className="loading">Loading deliveries…</p>}
      {attempts.isError && <ErrorNotice error={attempts.error} />}
      {attempts.isSuccess && deliveries.length === 0 && (
        <p className="hint">
          No deliveries yet. One is sent when a subscribed event happens (for run events: a run in the{" "}
          <strong>{webhook.environment}</strong> environment ends or pauses).
        </p>
      )}
      {deliveries.length > 0 && (
        <div className="table-scroll">
          <table className="deliveries-table">
            <caption className="visually-hidden">Deliveries of {webhook.url} and their attempts</caption>
            <thead>
              <tr>
                <th scope="col">Attempt</th>
                <th scope="col">Status</th>
                <th scope="col">Time</th>
                <th scope="col">Response code</th>
                <th scope="col">Latency</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            {deliveries.map((delivery) => (
              <DeliveryRows
                key={delivery.id}
                delivery={delivery}
                awaitingSince={awaiting[delivery.id]}
                onRedelivery={(last) => setAwaiting((current) => ({ ...current, [delivery.id]: last }))}
              />
            ))}
          </table>
        </div>
      )}
      {attempts.data?.length === ATTEMPTS_LIMIT && (
        <p className="hint">Showing the newest {ATTEMPTS_LIMIT} attempts.</p>
      )}
    </section>
  );
}

/** One delivery: a header row (event, run, redeliver and its outcome), then one row per attempt. */
function DeliveryRows({
  delivery,
  awaitingSince,
  onRedelivery,
}: {
  delivery: Delivery;
  awaitingSince: number | undefined;
  onRedelivery: (lastAttempt: number) => void;
}) {
  const trpc = useTRPC();
  const redeliver = useMutation(trpc.webhook.redeliver.mutationOptions());
  const waiting = isAwaited(delivery, awaitingSince);
  const latest = delivery.attempts.at(-1);
  const outcome =
    awaitingSince === undefined
      ? ""
      : waiting || !latest
        ? "Redelivery queued, waiting for its attempt…"
        : `Redelivery: ${describeAttempt(latest)}`;
  return (
    <tbody className="delivery">
      <tr className="delivery-header">
        <th scope="rowgroup" colSpan={6}>
          <div className="delivery-header-content">
            <span>
              <code>{delivery.eventType}</code>{" "}
              {delivery.runId ? (
                <Link href={`/runs/${delivery.runId}`}>run {delivery.runId.slice(0, 8)}</Link>
              ) : (
                <span className="hint">prompt event</span>
              )}{" "}
              <span className="hint">delivery {delivery.id.slice(0, 8)}</span>
            </span>
            <span className="delivery-redeliver">
              <button
                type="button"
                className="ghost"
                disabled={redeliver.isPending || waiting}
                onClick={() => {
                  // Counted before asking: the attempt may land before the answer does.
                  const lastBefore = lastAttemptNumber(delivery);
                  redeliver.mutate(
                    { deliveryId: delivery.id },
                    { onSuccess: () => onRedelivery(lastBefore) },
                  );
                }}
                aria-label={`Redeliver ${delivery.eventType} delivery ${delivery.id.slice(0, 8)}`}
              >
                Redeliver
              </button>
              <span role="status" className="redelivery-outcome">
                {outcome}
              </span>
            </span>
          </div>
          {redeliver.isError && <ErrorNotice error={redeliver.error} />}
        </th>
      </tr>
      {delivery.attempts.map((attempt) => (
        <tr key={attempt.id}>
          <td>#{attempt.attempt}</td>
          <td>
            <span className={succeeded(attempt) ? "badge badge-ok" : "badge badge-failed"}>
              {succeeded(attempt) ? "Delivered" : "Failed"}
            </span>
          </td>
          <td>
            <LocalTime iso={attempt.attemptedAt} />
          </td>
          <td>{attempt.responseStatus ?? "none"}</td>
          <td>{attempt.latencyMs === null ? "–" : `${Math.round(attempt.latencyMs)} ms`}</td>
          <td className="attempt-error">{attempt.error ?? ""}</td>
        </tr>
      ))}
    </tbody>
  );
}
