import type { Environment, WebhookEventType } from "@promptrun/contract";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../api/trpc.ts";
import { ErrorNotice } from "../components/notice.tsx";
import { SecretShownOnce } from "../components/secret-shown-once.tsx";
import { defaultWebhookEvents, webhookEvents, webhookEventTypes } from "./webhook-events.ts";

/** Adds a webhook; its signing secret (returned only by this call) is shown once. */
export function WebhookCreateForm({ environments }: { environments: Environment[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [environment, setEnvironment] = useState(
    environments.some((candidate) => candidate.name === "production")
      ? "production"
      : (environments[0]?.name ?? "production"),
  );
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<WebhookEventType[]>(defaultWebhookEvents);
  const [secret, setSecret] = useState<string | null>(null);
  const create = useMutation(
    trpc.webhook.create.mutationOptions({
      onSuccess: async (created) => {
        setSecret(created.secret);
        setUrl("");
        setEvents(defaultWebhookEvents);
        await queryClient.invalidateQueries(trpc.webhook.list.queryFilter());
      },
    }),
  );
  const toggle = (event: WebhookEventType, checked: boolean) =>
    setEvents((current) =>
      checked ? [...current, event] : current.filter((candidate) => candidate !== event),
    );
  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    setSecret(null);
    create.mutate({ environment, url: url.trim(), events });
  };
  return (
    <section className="panel" aria-labelledby="webhook-create-title">
      <h2 id="webhook-create-title">Add a webhook</h2>
      <form onSubmit={submit} className="webhook-create-form">
        <div>
          <label htmlFor="webhook-environment">Environment</label>
          <select
            id="webhook-environment"
            value={environment}
            onChange={(event) => setEnvironment(event.target.value)}
          >
            {environments.map((candidate) => (
              <option key={candidate.name} value={candidate.name}>
                {candidate.name}
              </option>
            ))}
          </select>
        </div>
        <div className="webhook-create-url">
          <label htmlFor="webhook-url">URL</label>
          <input
            id="webhook-url"
            type="url"
            inputMode="url"
            placeholder="https://example.com/hooks/promptrun"
            value={url}
            onChange={(event) => setUrl(event.target.value)}
            required
          />
        </div>
        <fieldset className="webhook-create-events">
          <legend>Events</legend>
          {webhookEventTypes.map((type) => (
            <label key={type} className="checkbox">
              <input
                type="checkbox"
                checked={events.includes(type)}
                onChange={(event) => toggle(type, event.target.checked)}
              />
              <code>{type}</code> <span className="hint">{webhookEvents[type]}</span>
            </label>
          ))}
        </fieldset>
        {create.isError && <ErrorNotice error={create.error} />}
        <button type="submit" disabled={create.isPending || events.length === 0 || url.trim() === ""}>
          {create.isPending ? "Adding…" : "Add webhook"}
        </button>
      </form>
      {secret !== null && (
        <SecretShownOnce
          title="Signing secret of the new webhook"
          secret={secret}
          onDone={() => setSecret(null)}
        >
          Your receiver verifies each delivery's <code>webhook-signature</code> header with it (Standard
          Webhooks). Promptrun keeps it encrypted and never shows it again; to replace it, delete the webhook
          and add it anew.
        </SecretShownOnce>
      )}
    </section>
  );
}
