import type { Webhook } from "@promptrun/contract";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../api/trpc.ts";
import { ConfirmDialog } from "../components/confirm-dialog.tsx";
import { LocalTime } from "../components/local-time.tsx";
import { ErrorNotice } from "../components/notice.tsx";
import { WebhookDeliveries } from "./webhook-deliveries.tsx";

/** One endpoint: its URL, events, state and failure streak, its actions, and its deliveries. */
export function WebhookCard({ webhook }: { webhook: Webhook }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [confirmingDelete, setConfirmingDelete] = useState(false);
  const refreshList = () => queryClient.invalidateQueries(trpc.webhook.list.queryFilter());
  const setEnabled = useMutation(trpc.webhook.setEnabled.mutationOptions({ onSuccess: refreshList }));
  const remove = useMutation(trpc.webhook.delete.mutationOptions({ onSuccess: refreshList }));
  const titleId = `webhook-${webhook.id}`;
  return (
    <article className="webhook-card panel" aria-labelledby={titleId}>
      <header className="webhook-card-header">
        <h3 id={titleId} className="webhook-url">
          {webhook.url}
        </h3>
        <div className="webhook-card-actions">
          <button
            type="button"
            className="ghost"
            disabled={setEnabled.isPending}
            onClick={() => setEnabled.mutate({ id: webhook.id, enabled: !webhook.enabled })}
            aria-label={`${webhook.enabled ? "Disable" : "Enable"} the webhook ${webhook.url}`}
          >
            {webhook.enabled ? "Disable" : "Enable"}
          </button>
          <button
            type="button"
            className="danger"
            disabled={remove.isPending}
            onClick={() => setConfirmingDelete(true)}
            aria-label={`Delete the webhook ${webhook.url}`}
          >
            Delete
          </button>
        </div>
      </header>
      <WebhookFacts webhook={webhook} />
      {setEnabled.isError && <ErrorNotice error={setEnabled.error} />}
      {remove.isError && <ErrorNotice error={remove.error} />}
      <WebhookDeliveries webhook={webhook} />
      <ConfirmDialog
        open={confirmingDelete}
        title="Delete this webhook?"
        confirmLabel="Delete webhook"
        onConfirm={() => remove.mutate({ id: webhook.id })}
        onClose={() => setConfirmingDelete(false)}
      >
        <p>
          <code className="webhook-url">{webhook.url}</code> in <strong>{webhook.environment}</strong> stops
          receiving events now, and deliveries still waiting are not sent. This cannot be undone.
        </p>
      </ConfirmDialog>
    </article>
  );
}

/** State, failure streak (consecutive failed deliveries), events and creation time. */
function WebhookFacts({ webhook }: { webhook: Webhook }) {
  const streak = webhook.failureStreak;
  return (
    <dl className="webhook-facts">
      <div>
        <dt>State</dt>
        <dd>
          <span className={webhook.enabled ? "badge badge-ok" : "badge badge-off"}>
            {webhook.enabled ? "Enabled" : "Disabled"}
          </span>
        </dd>
      </div>
      <div>
        <dt>Failure streak</dt>
        <dd>
          {streak === 0
            ? "0 (last delivery succeeded or none yet)"
            : `${streak} failed ${streak === 1 ? "delivery" : "deliveries"} in a row`}
        </dd>
      </div>
      <div>
        <dt>Events</dt>
        <dd>
          <ul className="event-list">
            {webhook.events.map((event) => (
              <li key={event}>
                <code>{event}</code>
              </li>
            ))}
          </ul>
        </dd>
      </div>
      <div>
        <dt>Created</dt>
        <dd>
          <LocalTime iso={webhook.createdAt} />
        </dd>
      </div>
    </dl>
  );
}
