import type { PromptSummary } from "@promptrun/contract";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { useTRPC } from "../api/trpc.ts";
import { ErrorNotice } from "../components/notice.tsx";
import { isoOfLocalInput, localInputOf, type RunFilters } from "./runs-filters.ts";

const HOUR = 3_600_000;
const RANGES = [
  { label: "Last hour", ms: HOUR },
  { label: "Last 24 h", ms: 24 * HOUR },
  { label: "Last 7 days", ms: 7 * 24 * HOUR },
];

interface Props {
  filters: RunFilters;
  /** The prompt's summary (its latest version and tags), when a prompt is chosen. */
  summary: PromptSummary | undefined;
  onChange(filters: RunFilters): void;
}

/** `3` → version 3, `tag:production` → the tag, in one select. */
const versionChoiceOf = (filters: RunFilters): string =>
  filters.tag ? `tag:${filters.tag}` : (filters.version ?? "");

function SelectFilter(props: {
  id: string;
  label: string;
  value: string | undefined;
  options: { value: string; label: string }[];
  anyLabel: string;
  disabled?: boolean;
  onChange(value: string): void;
}) {
  return (
    <div className="filter">
      <label htmlFor={props.id}>{props.label}</label>
      <select
        id={props.id}
        value={props.value ?? ""}
        disabled={props.disabled}
        onChange={(event) => props.onChange(event.target.value)}
      >
        <option value="">{props.anyLabel}</option>
        {props.options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}

const plain = (values: string[]) => values.map((value) => ({ value, label: value }));

/**
 * The filters of the runs table. Choices apply at once; the thread and the time range (typed)
 * apply with "Apply". Everything is written to the URL by `onChange`.
 */
// long-function: one form whose controls share the draft state of the typed filters.
export function RunsFilterForm({ filters, summary, onChange }: Props) {
  const trpc = useTRPC();
  const prompts = useQuery(trpc.prompt.list.queryOptions({ limit: 200 }));
  const environments = useQuery(trpc.environment.list.queryOptions());
  const [thread, setThread] = useState(filters.thread ?? "");
  const [after, setAfter] = useState(localInputOf(filters.createdAfter));
  const [before, setBefore] = useState(localInputOf(filters.createdBefore));
  // The URL is the truth: follow it when it changes (back button, a shared link, "Clear").
  useEffect(() => setThread(filters.thread ?? ""), [filters.thread]);
  useEffect(() => setAfter(localInputOf(filters.createdAfter)), [filters.createdAfter]);
  useEffect(() => setBefore(localInputOf(filters.createdBefore)), [filters.createdBefore]);

  const set = (changes: RunFilters) => onChange({ ...filters, ...changes });
  const apply = (event: FormEvent) => {
    event.preventDefault();
    set({
      thread: thread.trim(),
      createdAfter: isoOfLocalInput(after),
      createdBefore: isoOfLocalInput(before),
    });
  };
  const lastPeriod = (ms: number) =>
    set({ createdAfter: new Date(Date.now() - ms).toISOString(), createdBefore: undefined });

  const slugs = (prompts.data?.items ?? []).map((prompt) => prompt.slug);
  if (filters.prompt && !slugs.includes(filters.prompt)) slugs.unshift(filters.prompt);
  const environmentNames = [
    ...new Set(["production", ...(environments.data ?? []).map((environment) => environment.name)]),
  ];
  if (filters.environment && !environmentNames.includes(filters.environment))
    environmentNames.push(filters.environment);
  const versionOptions = summary
    ? [
        ...Object.entries(summary.tags).map(([tag, version]) => ({
          value: `tag:${tag}`,
          label: `tag ${tag} (v${version})`,
        })),
        ...Array.from({ length: summary.latestVersion }, (_, index) => summary.latestVersion - index).map(
          (version) => ({ value: String(version), label: `v${version}` }),
        ),
      ]
    : [];

  return (
    <form className="runs-filters panel" aria-label="Filter runs" onSubmit={apply}>
      <SelectFilter
        id="filter-status"
        label="Status"
        value={filters.status}
        anyLabel="Any status"
        options={plain(["pending", "completed", "failed"])}
        onChange={(status) => set({ status })}
      />
      <SelectFilter
        id="filter-phase"
        label="Phase"
        value={filters.phase}
        anyLabel="Any phase"
        options={plain(["queued", "running", "requires_action"])}
        onChange={(phase) => set({ phase })}
      />
      <SelectFilter
        id="filter-prompt"
        label="Prompt"
        value={filters.prompt}
        anyLabel="Any prompt"
        options={plain(slugs)}
        onChange={(prompt) => set({ prompt, version: undefined, tag: undefined })}
      />
      <SelectFilter
        id="filter-version"
        label="Version or tag"
        value={versionChoiceOf(filters)}
        anyLabel={filters.prompt ? "Any version" : "Choose a prompt first"}
        options={versionOptions}
        disabled={!filters.prompt}
        onChange={(choice) =>
          set(
            choice.startsWith("tag:")
              ? { tag: choice.slice(4), version: undefined }
              : { version: choice, tag: undefined },
          )
        }
      />
      <SelectFilter
        id="filter-environment"
        label="Environment"
        value={filters.environment}
        anyLabel="Any environment"
        options={plain(environmentNames)}
        onChange={(environment) => set({ environment })}
      />
      <div className="filter filter-wide">
        <label htmlFor="filter-thread">Thread id</label>
        <input
          id="filter-thread"
          value={thread}
          placeholder="UUID of a thread"
          spellCheck={false}
          onChange={(event) => setThread(event.target.value)}
        />
      </div>
      <div className="filter">
        <label htmlFor="filter-after">Created from</label>
        <input
          id="filter-after"
          type="datetime-local"
          value={after}
          onChange={(event) => setAfter(event.target.value)}
        />
      </div>
      <div className="filter">
        <label htmlFor="filter-before">Created before</label>
        <input
          id="filter-before"
          type="datetime-local"
          value={before}
          onChange={(event) => setBefore(event.target.value)}
        />
      </div>
      <div className="filter-actions">
        <button type="submit">Apply</button>
        {RANGES.map((range) => (
          <button key={range.label} type="button" className="ghost" onClick={() => lastPeriod(range.ms)}>
            {range.label}
          </button>
        ))}
        <button type="button" className="ghost" onClick={() => onChange({})}>
          Clear filters
        </button>
      </div>
      {prompts.isError ? <ErrorNotice error={prompts.error} /> : null}
      {environments.isError ? <ErrorNotice error={environments.error} /> : null}
    </form>
  );
}
