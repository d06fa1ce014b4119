import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../api/trpc.ts";
import { ErrorNotice } from "../components/notice.tsx";
import { ApiKeysPanel } from "./api-keys-panel.tsx";
import { EnvironmentCard } from "./environment-card.tsx";
import { EnvironmentCreateForm } from "./environment-create-form.tsx";
import "./admin-screens.css";

/**
 * Environments and API keys (docs/console.md screen 8). Env var values are write-only: this
 * screen sends them and never asks for them (the API lists names only).
 */
export function EnvironmentsScreen() {
  const trpc = useTRPC();
  const environments = useQuery(trpc.environment.list.queryOptions());
  return (
    <section aria-labelledby="screen-title" className="admin-screen">
      <h1 id="screen-title">Environments and API keys</h1>
      <section aria-labelledby="environments-title">
        <h2 id="environments-title">Environments</h2>
        <p className="hint">
          A run names its environment (default <code>production</code>) and reads its variables as{" "}
          <code>{"{{env.NAME}}"}</code> (provider keys such as <code>OPENAI_API_KEY</code> too). Values are
          stored encrypted and are write-only: set or replace them here, they are never shown again.
        </p>
        {environments.isPending && <p className="loading">Loading environments…</p>}
        {environments.isError && <ErrorNotice error={environments.error} />}
        {environments.data?.map((environment) => (
          <EnvironmentCard key={environment.name} environment={environment} />
        ))}
        <EnvironmentCreateForm />
      </section>
      <ApiKeysPanel />
    </section>
  );
}
