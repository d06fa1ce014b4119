import type { PromptSummary, PromptVersion, PushResult } from "@promptrun/contract";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useMemo, useState } from "react";
import { Link, useLocation, useSearch } from "wouter";
import { LazyPromptFileEditor } from "../components/lazy-prompt-file-editor.tsx";
import { EmptyState, ErrorNotice } from "../components/notice.tsx";
import { SavedNotice } from "../components/saved-notice.tsx";
import { InputFields, type InputValues, initialValues, toInputs } from "./playground-inputs.tsx";
import { useLiveRun } from "./playground-run.ts";
import { RunView } from "./playground-run-view.tsx";
import { getVersion, listPrompts, listVersions, promptKeys } from "./prompt-api.ts";
import { versionYaml } from "./prompt-file-yaml.ts";
import "./prompts.css";

/** The choices of "version or tag": latest, each tag, each version (the URL segment of a run). */
function versionChoices(summary: PromptSummary | undefined, versions: PromptVersion[]) {
  const choices = [{ value: "latest", label: `latest (version ${summary?.latestVersion ?? "…"})` }];
  for (const [tag, version] of Object.entries(summary?.tags ?? {}).sort(([a], [b]) => a.localeCompare(b)))
    choices.push({ value: tag, label: `${tag} (version ${version})` });
  for (const version of versions)
    choices.push({ value: String(version.version), label: `version ${version.version}` });
  return choices;
}

function Pickers({
  prompts,
  slug,
  selector,
  onSelector,
}: {
  prompts: PromptSummary[];
  slug: string | undefined;
  selector: string;
  onSelector: (selector: string) => void;
}) {
  const [, navigate] = useLocation();
  const summary = prompts.find((prompt) => prompt.slug === slug);
  const versions = useQuery({
    queryKey: promptKeys.versions(slug ?? ""),
    queryFn: () => listVersions(slug ?? ""),
    enabled: slug !== undefined,
  });
  return (
    <div className="playground-pickers">
      <div>
        <label htmlFor="playground-prompt">Prompt</label>
        <select
          id="playground-prompt"
          value={slug ?? ""}
          onChange={(event) => navigate(`/playground/${event.target.value}`)}
        >
          {slug === undefined && <option value="">Pick a prompt…</option>}
          {slug !== undefined && !summary && <option value={slug}>{slug}</option>}
          {prompts.map((prompt) => (
            <option key={prompt.slug} value={prompt.slug}>
              {prompt.slug}
            </option>
          ))}
        </select>
      </div>
      {slug !== undefined && (
        <div>
          <label htmlFor="playground-version">Version or tag</label>
          <select
            id="playground-version"
            value={selector}
            onChange={(event) => onSelector(event.target.value)}
          >
            {versionChoices(summary, versions.data ?? []).map((choice) => (
              <option key={choice.value} value={choice.value}>
                {choice.label}
              </option>
            ))}
          </select>
        </div>
      )}
      {versions.isError && <ErrorNotice error={versions.error} />}
    </div>
  );
}

/** The run form of one resolved version: its declared inputs, and Run. */
function RunForm({
  version,
  busy,
  onRun,
}: {
  version: PromptVersion;
  busy: boolean;
  onRun: (inputs: Record<string, unknown>) => void;
}) {
  const [values, setValues] = useState<InputValues>(() => initialValues(version.inputs));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    const checked = toInputs(version.inputs, values);
    setErrors(checked.errors);
    if (Object.keys(checked.errors).length === 0) onRun(checked.inputs);
  };
  return (
    <form className="panel" onSubmit={submit} aria-labelledby="inputs-title">
      <h2 id="inputs-title">
        Inputs of version {version.version} <span className="type-badge">({version.model})</span>
      </h2>
      <InputFields
        declared={version.inputs}
        values={values}
        errors={errors}
        onChange={(name, value) => setValues((previous) => ({ ...previous, [name]: value }))}
      />
      <button type="submit" disabled={busy}>
        {busy ? "Running…" : "Run"}
      </button>
    </form>
  );
}

/** Edit the version's file and push it as the next version, then run that. */
function SaveAsNewVersion({
  version,
  onSaved,
}: {
  version: PromptVersion;
  onSaved: (version: number) => void;
}) {
  const queryClient = useQueryClient();
  const text = useMemo(() => versionYaml(version), [version]);
  // Said here, not by the editor: the editor starts over on the version just saved.
  const [saved, setSaved] = useState<PushResult | null>(null);
  // The editor (and its code) only once opened.
  const [open, setOpen] = useState(false);
  return (
    <details className="panel" onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>Edit the prompt and save as a new version</summary>
      <h2 id="playground-edit-title" className="sr-only">
        Prompt file of {version.slug}, from version {version.version}
      </h2>
      {open && (
        <LazyPromptFileEditor
          key={version.id}
          initialText={text}
          headingId="playground-edit-title"
          announceSaved={false}
          onSaved={(result) => {
            setSaved(result);
            void queryClient.invalidateQueries({ queryKey: promptKeys.list });
            void queryClient.invalidateQueries({ queryKey: promptKeys.prompt(result.slug) });
            if (result.slug === version.slug) onSaved(result.version);
          }}
        />
      )}
      {saved && saved.slug === version.slug && saved.version === version.version && (
        <SavedNotice saved={saved} />
      )}
    </details>
  );
}

function Playground({ slug, prompts }: { slug: string | undefined; prompts: PromptSummary[] }) {
  const search = useSearch();
  const [selector, setSelector] = useState(() => new URLSearchParams(search).get("version") ?? "latest");
  useEffect(() => setSelector(new URLSearchParams(search).get("version") ?? "latest"), [search, slug]);
  const version = useQuery({
    queryKey: promptKeys.version(slug ?? "", selector),
    queryFn: () => getVersion(slug ?? "", selector),
    enabled: slug !== undefined,
    // The form and editor stay while the next version loads (a save switches to the version it made).
    placeholderData: (previous) => (previous?.slug === slug ? previous : undefined),
  });
  const { live, start, submit } = useLiveRun();
  const busy = live !== null && !["completed", "failed"].includes(live.status) && live.error === null;
  return (
    <>
      <div className="panel">
        <Pickers prompts={prompts} slug={slug} selector={selector} onSelector={setSelector} />
      </div>
      {slug === undefined && <p className="muted">Pick a prompt to fill its inputs and run it.</p>}
      {version.isError && <ErrorNotice error={version.error} />}
      {version.data && (
        <div className="two-columns">
          <div>
            <RunForm
              key={version.data.id}
              version={version.data}
              busy={busy}
              onRun={(inputs) => void start(version.data.slug, selector, inputs)}
            />
            <SaveAsNewVersion version={version.data} onSaved={(saved) => setSelector(String(saved))} />
          </div>
          <div>{live ? <RunView live={live} onSubmitToolOutputs={submit} /> : <RunPlaceholder />}</div>
        </div>
      )}
    </>
  );
}

const RunPlaceholder = () => (
  <section className="panel" aria-labelledby="run-title">
    <h2 id="run-title">Run</h2>
    <p className="muted">Fill the inputs and press Run: the text appears here as the model writes it.</p>
  </section>
);

/** Pick a prompt and a version or tag, fill its inputs, run it and watch it live; save an edit as a new version. */
export function PlaygroundScreen({ params }: { params: { slug?: string } }) {
  const prompts = useQuery({ queryKey: promptKeys.list, queryFn: listPrompts });
  return (
    <section aria-labelledby="screen-title">
      <div className="screen-head">
        <div>
          <h1 id="screen-title">Playground</h1>
          <p>
            Pick a prompt, fill its inputs and run it; tokens, tool calls, usage and cost show as they happen.
          </p>
        </div>
        {params.slug && <Link href={`/prompts/${params.slug}`}>Versions and tags of {params.slug}</Link>}
      </div>
      {prompts.isPending && <p className="loading">Loading prompts…</p>}
      {prompts.isError && <ErrorNotice error={prompts.error} />}
      {prompts.data?.length === 0 && (
        <EmptyState title="No prompts to run yet">
          Push a prompt file with the CLI (
          <code>bun run promptrun prompts push prompts/ --tenant &lt;id&gt;</code>) or{" "}
          <Link href="/prompts?new=1">write a new prompt</Link> in the console, then come back to run it.
        </EmptyState>
      )}
      {prompts.data && prompts.data.length > 0 && (
        <Playground key={params.slug ?? ""} slug={params.slug} prompts={prompts.data} />
      )}
    </section>
  );
}
