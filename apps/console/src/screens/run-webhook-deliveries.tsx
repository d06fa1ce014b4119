import type { PromptRun } from "@promptrun/contract";
import { useQuery } from "@tanstack/react-query";
import { Link } from "wouter";
import { useTRPC } from "../api/trpc.ts";
import { formatDateTime } from "../components/figures.ts";
import { ErrorNotice } from "../components/notice.tsx";
import { ScrollRegion } from "../components/scroll-region.tsx";

/** Deliveries go out just after a run ends: keep reading them this long after. */
const FOLLOW_AFTER_END_MS = 60_000;

/** The webhook delivery attempts of one run (tRPC `webhook.attempts` by `runId`), as the API orders them. */
export function RunWebhookDeliveries({ run }: { run: Pick<PromptRun, "id" | "status" | "finishedAt"> }) {
  const trpc = useTRPC();
  const following = () =>
    run.status === "pending" ||
    (run.finishedAt !== null && Date.now() - Date.parse(run.finishedAt) < FOLLOW_AFTER_END_MS);
  const attempts = useQuery({
    ...trpc.webhook.attempts.queryOptions({ runId: run.id, limit: 200 }),
    refetchInterval: () => (following() ? 2_000 : false),
  });
  const webhooks = useQuery(trpc.webhook.list.queryOptions());
  if (attempts.isError) return <ErrorNotice error={attempts.error} />;
  if (attempts.isPending) return <p className="loading">Loading deliveries…</p>;
  if (attempts.data.length === 0) {
    return (
      <p className="muted">
        No webhook delivery for this run. Endpoints of the run's environment that listen to its events get one
        when it ends (or pauses); add one on the <Link href="/webhooks">Webhooks</Link> screen.
      </p>
    );
  }
  const urlOf = (id: string) => webhooks.data?.find((webhook) => webhook.id === id)?.url ?? id;
  return (
    <ScrollRegion label="Delivery attempts">
      <table className="deliveries">
        <caption className="visually-hidden">Webhook delivery attempts of this run</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Endpoint</th>
            <th scope="col">Attempt</th>
            <th scope="col">Time</th>
            <th scope="col">Response</th>
            <th scope="col">Latency</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {attempts.data.map((attempt) => (
            <tr key={attempt.id}>
              <td>{attempt.eventType}</td>
              <td className="wrap">{urlOf(attempt.webhookId)}</td>
              <td className="number">{attempt.attempt}</td>
              <td>
                <time dateTime={attempt.attemptedAt}>{formatDateTime(attempt.attemptedAt)}</time>
              </td>
              <td className="number">{attempt.responseStatus ?? "—"}</td>
              <td className="number">{attempt.latencyMs === null ? "—" : `${attempt.latencyMs} ms`}</td>
              <td className="wrap">{attempt.error ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {webhooks.isError ? <ErrorNotice error={webhooks.error} /> : null}
    </ScrollRegion>
  );
}
