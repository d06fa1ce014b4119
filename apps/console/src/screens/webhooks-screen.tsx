import type { Webhook } from "@promptrun/contract";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../api/trpc.ts";
import { EmptyState, ErrorNotice } from "../components/notice.tsx";
import { WebhookCard } from "./webhook-card.tsx";
import { WebhookCreateForm } from "./webhook-create-form.tsx";
import "./admin-screens.css";

/** The state and failure streak move as deliveries go out: read again this often. */
const POLL_MS = 5_000;

/** Webhooks (docs/console.md screen 7): endpoints per environment, their deliveries, redelivery. */
export function WebhooksScreen() {
  const trpc = useTRPC();
  const environments = useQuery(trpc.environment.list.queryOptions());
  const webhooks = useQuery({ ...trpc.webhook.list.queryOptions(), refetchInterval: POLL_MS });
  return (
    <section aria-labelledby="screen-title" className="admin-screen">
      <h1 id="screen-title">Webhooks</h1>
      <p className="hint">
        A webhook receives a signed POST (Standard Webhooks headers) for the events it names; every attempt is
        logged below with its response.
      </p>
      {environments.isError && <ErrorNotice error={environments.error} />}
      {environments.isSuccess && <WebhookCreateForm environments={environments.data} />}
      {webhooks.isPending && <p className="loading">Loading webhooks…</p>}
      {webhooks.isError && <ErrorNotice error={webhooks.error} />}
      {webhooks.isSuccess && webhooks.data.length === 0 && <NoWebhooks />}
      {webhooks.isSuccess &&
        groupByEnvironment(webhooks.data).map(([environment, endpoints]) => (
          <section
            key={environment}
            aria-labelledby={`environment-${environment}`}
            className="environment-group"
          >
            <h2 id={`environment-${environment}`}>
              Environment <code>{environment}</code>
            </h2>
            {endpoints.map((webhook) => (
              <WebhookCard key={webhook.id} webhook={webhook} />
            ))}
          </section>
        ))}
    </section>
  );
}

const groupByEnvironment = (webhooks: Webhook[]): [string, Webhook[]][] => {
  const groups = new Map<string, Webhook[]>();
  for (const webhook of webhooks)
    groups.set(webhook.environment, [...(groups.get(webhook.environment) ?? []), webhook]);
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b));
};

function NoWebhooks() {
  return (
    <EmptyState title="No webhooks yet">
      A webhook POSTs a signed JSON event to your URL when a run of its environment completes (
      <code>run.completed</code>), fails (<code>run.failed</code>) or waits for tool outputs (
      <code>run.requires_action</code>), and, if you tick them, when a push creates a prompt version (
      <code>prompt.version.created</code>) or a tag moves (<code>prompt.tag.moved</code>). The body is{" "}
      <code>{"{type, timestamp, data}"}</code> with the run or the prompt change as <code>data</code>; failed
      deliveries are retried, and you can redeliver any of them from here. Add one above: pick the
      environment, give the URL and tick the events.
    </EmptyState>
  );
}
