import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../api/trpc.ts";
import { ErrorNotice } from "../components/notice.tsx";

/** Adds an environment (environment.set with no variables creates it, like `promptrun envs set`). */
export function EnvironmentCreateForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const create = useMutation(
    trpc.environment.set.mutationOptions({
      onSuccess: async () => {
        setName("");
        await queryClient.invalidateQueries(trpc.environment.list.queryFilter());
      },
    }),
  );
  return (
    <form
      className="panel env-create-form"
      aria-labelledby="environment-create-title"
      onSubmit={(event) => {
        event.preventDefault();
        create.mutate({ environment: name.trim(), values: {} });
      }}
    >
      <h3 id="environment-create-title">Add an environment</h3>
      <div className="inline-form-fields">
        <div>
          <label htmlFor="environment-name">Name</label>
          <input
            id="environment-name"
            value={name}
            onChange={(event) => setName(event.target.value)}
            placeholder="staging"
            aria-describedby="environment-name-hint"
            autoComplete="off"
            required
          />
        </div>
        <button type="submit" disabled={create.isPending || name.trim() === ""}>
          {create.isPending ? "Adding…" : "Add environment"}
        </button>
      </div>
      <p id="environment-name-hint" className="hint">
        Lower case letters, digits, <code>-</code> and <code>_</code>, starting with a letter or digit.
      </p>
      {create.isError && <ErrorNotice error={create.error} />}
    </form>
  );
}
