import type { ApiKeySummary } from "@promptrun/contract";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { SESSION_QUERY_KEY } from "../api/session.ts";
import { useTRPC } from "../api/trpc.ts";
import { ConfirmDialog } from "../components/confirm-dialog.tsx";
import { LocalTime } from "../components/local-time.tsx";
import { ErrorNotice } from "../components/notice.tsx";
import { SecretShownOnce } from "../components/secret-shown-once.tsx";

/** Active keys first, then newest first. */
const byActiveThenNewest = (a: ApiKeySummary, b: ApiKeySummary) =>
  Number(a.revokedAt !== null) - Number(b.revokedAt !== null) || b.createdAt.localeCompare(a.createdAt);

/** The tenant's API keys: list, create (the full key shown once), revoke. */
export function ApiKeysPanel() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const keys = useQuery(trpc.key.list.queryOptions());
  const [created, setCreated] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<ApiKeySummary | null>(null);
  const refresh = () => queryClient.invalidateQueries(trpc.key.list.queryFilter());
  const create = useMutation(
    trpc.key.create.mutationOptions({
      onSuccess: async (result) => {
        setCreated(result.apiKey);
        await refresh();
      },
    }),
  );
  const revoke = useMutation(
    trpc.key.revoke.mutationOptions({
      onSuccess: async () => {
        await refresh();
        // The server ends the sessions signed in with a revoked key: if it was this one, the
        // session check now fails and the console shows the sign-in page.
        await queryClient.invalidateQueries({ queryKey: SESSION_QUERY_KEY });
      },
    }),
  );
  return (
    <section aria-labelledby="api-keys-title" className="api-keys">
      <h2 id="api-keys-title">API keys</h2>
      <p className="hint">
        Apps call the API with <code>Authorization: Bearer &lt;key&gt;</code>. Only a prefix of each key is
        kept for display; the full key is shown once, when it is created.
      </p>
      <button
        type="button"
        onClick={() => {
          setCreated(null);
          create.mutate();
        }}
        disabled={create.isPending}
      >
        {create.isPending ? "Creating…" : "Create API key"}
      </button>
      {create.isError && <ErrorNotice error={create.error} />}
      {created !== null && (
        <SecretShownOnce title="Your new API key" secret={created} onDone={() => setCreated(null)}>
          Put it in your app's secret store. Promptrun keeps only its hash: if it is lost, create another and
          revoke this one.
        </SecretShownOnce>
      )}
      {keys.isPending && <p className="loading">Loading keys…</p>}
      {keys.isError && <ErrorNotice error={keys.error} />}
      {revoke.isError && <ErrorNotice error={revoke.error} />}
      {keys.isSuccess && (
        <ApiKeysTable keys={keys.data} busy={revoke.isPending} onRevoke={(key) => setRevoking(key)} />
      )}
      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke the key ${revoking?.prefix ?? ""}…?`}
        confirmLabel="Revoke key"
        onConfirm={() => revoking && revoke.mutate({ id: revoking.id })}
        onClose={() => setRevoking(null)}
      >
        <p>
          Every app using <code>{revoking?.prefix}…</code> gets <code>401</code> from now on; this cannot be
          undone.
        </p>
        <p>
          If you signed in to this console with this key, the console is signed out too: the server ends the
          sessions of a revoked key.
        </p>
      </ConfirmDialog>
    </section>
  );
}

function ApiKeysTable({
  keys,
  busy,
  onRevoke,
}: {
  keys: ApiKeySummary[];
  busy: boolean;
  onRevoke: (key: ApiKeySummary) => void;
}) {
  return (
    <div className="table-scroll">
      <table className="api-keys-table">
        <caption className="visually-hidden">API keys of this tenant</caption>
        <thead>
          <tr>
            <th scope="col">Prefix</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {[...keys].sort(byActiveThenNewest).map((key) => (
            <tr key={key.id}>
              <th scope="row">
                <code>{key.prefix}…</code>
              </th>
              <td>
                <LocalTime iso={key.createdAt} />
              </td>
              <td>
                <LocalTime iso={key.lastUsedAt} />
              </td>
              <td>
                {key.revokedAt === null ? (
                  <span className="badge badge-ok">Active</span>
                ) : (
                  <span className="badge badge-off">
                    Revoked <LocalTime iso={key.revokedAt} />
                  </span>
                )}
              </td>
              <td>
                {key.revokedAt === null && (
                  <button
                    type="button"
                    className="ghost"
                    disabled={busy}
                    onClick={() => onRevoke(key)}
                    aria-label={`Revoke the key ${key.prefix}…`}
                  >
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
