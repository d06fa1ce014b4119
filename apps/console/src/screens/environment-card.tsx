import type { Environment } from "@promptrun/contract";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../api/trpc.ts";
import { ConfirmDialog } from "../components/confirm-dialog.tsx";
import { LocalTime } from "../components/local-time.tsx";
import { ErrorNotice } from "../components/notice.tsx";

const ENV_VAR_NAME = /^[A-Z][A-Z0-9_]*$/;

/** One environment: its variable names (never values), a delete per name, and a set form. */
export function EnvironmentCard({ environment }: { environment: Environment }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [deleting, setDeleting] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries(trpc.environment.list.queryFilter());
  const unset = useMutation(trpc.environment.unset.mutationOptions({ onSuccess: refresh }));
  const titleId = `environment-${environment.name}`;
  return (
    <article className="panel environment-card" aria-labelledby={titleId}>
      <h3 id={titleId}>
        <code>{environment.name}</code>
      </h3>
      <p className="hint">
        Created <LocalTime iso={environment.createdAt} />
      </p>
      {environment.envVarKeys.length === 0 ? (
        <p className="hint">
          No variables. Set one below; runs in this environment read it as {"{{env.NAME}}"}.
        </p>
      ) : (
        <div className="table-scroll">
          <table className="env-var-table">
            <caption className="visually-hidden">Variables of {environment.name}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Value</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {environment.envVarKeys.map((name) => (
                <tr key={name}>
                  <th scope="row">
                    <code>{name}</code>
                  </th>
                  <td className="hint">set (write-only)</td>
                  <td>
                    <button
                      type="button"
                      className="ghost"
                      disabled={unset.isPending}
                      onClick={() => setDeleting(name)}
                      aria-label={`Delete ${name} from ${environment.name}`}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {unset.isError && <ErrorNotice error={unset.error} />}
      <EnvVarSetForm environment={environment.name} onSet={refresh} />
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete ${deleting ?? ""}?`}
        confirmLabel="Delete variable"
        onConfirm={() => deleting && unset.mutate({ environment: environment.name, keys: [deleting] })}
        onClose={() => setDeleting(null)}
      >
        <p>
          Runs in <strong>{environment.name}</strong> no longer get <code>{deleting}</code>; a prompt that
          uses <code>{`{{env.${deleting ?? "NAME"}}}`}</code> then fails unless the run passes it in its{" "}
          <code>envVars</code>.
        </p>
      </ConfirmDialog>
    </article>
  );
}

/**
 * Sets NAME=value. The value field is uncontrolled (React would mirror a controlled value into
 * the DOM's `value` attribute): it is read once on submit and cleared as soon as it is stored.
 */
function EnvVarSetForm({ environment, onSet }: { environment: string; onSet: () => Promise<void> }) {
  const trpc = useTRPC();
  const [name, setName] = useState("");
  const set = useMutation(trpc.environment.set.mutationOptions());
  const trimmed = name.trim();
  const nameProblem =
    trimmed !== "" && !ENV_VAR_NAME.test(trimmed)
      ? "Use UPPER_CASE: a capital letter, then capitals, digits or _."
      : null;
  const id = (field: string) => `env-${environment}-${field}`;
  return (
    <form
      className="env-var-form"
      aria-label={`Set a variable in ${environment}`}
      onSubmit={(event) => {
        event.preventDefault();
        const form = event.currentTarget;
        const value = String(new FormData(form).get("value") ?? "");
        set.mutate(
          { environment, values: { [trimmed]: value } },
          {
            onSuccess: async () => {
              form.reset();
              setName("");
              await onSet();
            },
          },
        );
      }}
    >
      <div className="inline-form-fields">
        <div>
          <label htmlFor={id("name")}>Name</label>
          <input
            id={id("name")}
            value={name}
            onChange={(event) => setName(event.target.value.toUpperCase())}
            placeholder="OPENAI_API_KEY"
            autoComplete="off"
            spellCheck={false}
            aria-invalid={nameProblem !== null}
            aria-describedby={nameProblem ? id("name-problem") : undefined}
            required
          />
        </div>
        <div>
          <label htmlFor={id("value")}>Value</label>
          <input
            id={id("value")}
            name="value"
            type="password"
            autoComplete="new-password"
            spellCheck={false}
          />
        </div>
        <button type="submit" disabled={set.isPending || trimmed === "" || nameProblem !== null}>
          {set.isPending ? "Setting…" : "Set variable"}
        </button>
      </div>
      {nameProblem && (
        <p id={id("name-problem")} className="field-problem">
          {nameProblem}
        </p>
      )}
      {set.isError && <ErrorNotice error={set.error} />}
    </form>
  );
}
