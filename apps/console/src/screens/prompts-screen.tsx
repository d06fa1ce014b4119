import type { PromptSummary, UsageItem } from "@promptrun/contract";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useLocation, useSearch } from "wouter";
import { LazyPromptFileEditor } from "../components/lazy-prompt-file-editor.tsx";
import { EmptyState, ErrorNotice } from "../components/notice.tsx";
import { listPrompts, promptKeys, usageOfLastDay } from "./prompt-api.ts";
import { formatCount, formatUsd } from "./prompt-format.ts";
import "./prompts.css";

const NEW_PROMPT_TEMPLATE = `slug: my-prompt
description: What this prompt does
model: openai:gpt-4o-mini
inputs:
  question:
    type: string
messages:
  - role: system
    content: You answer in one short paragraph.
  - role: user
    content: "{{question}}"
`;

/** The tags of a prompt, `tag → version`, in name order. */
export function TagChips({ tags }: { tags: Record<string, number> }) {
  const entries = Object.entries(tags).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return <span className="muted">none</span>;
  return (
    <ul className="tag-list">
      {entries.map(([tag, version]) => (
        <li key={tag} className="tag-chip">
          {tag} → v{version}
        </li>
      ))}
    </ul>
  );
}

function PromptRow({ prompt, usage }: { prompt: PromptSummary; usage: UsageItem | undefined | null }) {
  return (
    <tr>
      <th scope="row">
        <Link href={`/prompts/${prompt.slug}`}>{prompt.slug}</Link>
      </th>
      <td>{prompt.description ?? <span className="muted">—</span>}</td>
      <td className="numeric">v{prompt.latestVersion}</td>
      <td>
        <TagChips tags={prompt.tags} />
      </td>
      <td className="numeric">{usage === null ? "—" : formatCount(usage?.runs ?? 0)}</td>
      <td className="numeric">
        {usage === null ? "—" : formatUsd(usage?.cost.total ?? 0)}
        {usage && usage.unpricedRuns > 0 && <span className="muted"> ({usage.unpricedRuns} unpriced)</span>}
      </td>
      <td>
        <Link href={`/playground/${prompt.slug}`}>
          Run<span className="sr-only"> {prompt.slug}</span>
        </Link>
      </td>
    </tr>
  );
}

function PromptsTable({ prompts }: { prompts: PromptSummary[] }) {
  const usage = useQuery({ queryKey: promptKeys.usage, queryFn: () => usageOfLastDay() });
  const usageBySlug = new Map((usage.data?.items ?? []).map((item) => [item.key, item]));
  return (
    <>
      {usage.isError && <ErrorNotice error={usage.error} />}
      <div className="table-scroll">
        <table>
          <caption className="sr-only">Prompts, with runs and cost of the last 24 hours</caption>
          <thead>
            <tr>
              <th scope="col">Prompt</th>
              <th scope="col">Description</th>
              <th scope="col" className="numeric">
                Latest
              </th>
              <th scope="col">Tags</th>
              <th scope="col" className="numeric">
                Runs (24 h)
              </th>
              <th scope="col" className="numeric">
                Cost (24 h)
              </th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {prompts.map((prompt) => (
              <PromptRow
                key={prompt.id}
                prompt={prompt}
                usage={usage.isSuccess ? usageBySlug.get(prompt.slug) : null}
              />
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** The tenant's prompts: tags, latest version, runs and cost of the last 24 h; a new prompt written here. */
export function PromptsScreen() {
  const [, navigate] = useLocation();
  // `?new=1` (the playground's empty state links here) opens the editor of a new prompt.
  const search = useSearch();
  const [writing, setWriting] = useState(() => new URLSearchParams(search).has("new"));
  const prompts = useQuery({ queryKey: promptKeys.list, queryFn: listPrompts });
  return (
    <section aria-labelledby="screen-title">
      <div className="screen-head">
        <div>
          <h1 id="screen-title">Prompts</h1>
          <p>Every prompt of this tenant, its tags, and its runs and cost of the last 24 hours.</p>
        </div>
        <button type="button" onClick={() => setWriting((open) => !open)} aria-expanded={writing}>
          {writing ? "Close the new prompt" : "New prompt"}
        </button>
      </div>
      {writing && (
        <div className="panel">
          <h2 id="new-prompt-title">New prompt file (YAML)</h2>
          <LazyPromptFileEditor
            initialText={NEW_PROMPT_TEMPLATE}
            headingId="new-prompt-title"
            onSaved={(result) => navigate(`/prompts/${result.slug}`)}
          />
        </div>
      )}
      {prompts.isPending && <p className="loading">Loading prompts…</p>}
      {prompts.isError && <ErrorNotice error={prompts.error} />}
      {prompts.data?.length === 0 && (
        <EmptyState title="No prompts yet">
          Push your prompt files with the CLI (
          <code>bun run promptrun prompts push prompts/ --tenant &lt;id&gt;</code>
          ), send one to <code>POST /api/v1/prompts</code>, or write one here with “New prompt”.
        </EmptyState>
      )}
      {prompts.data && prompts.data.length > 0 && <PromptsTable prompts={prompts.data} />}
    </section>
  );
}
