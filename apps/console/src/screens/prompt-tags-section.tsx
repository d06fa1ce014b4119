import type { PromptSummary, PromptVersion, TagHistoryEntry } from "@promptrun/contract";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ConfirmDialog } from "../components/confirm-dialog.tsx";
import { EmptyState, ErrorNotice } from "../components/notice.tsx";
import { moveTag, promptKeys, tagHistory } from "./prompt-api.ts";
import { formatTime } from "./prompt-format.ts";

/** A tag move the user asked for, waiting for the confirmation (`from` null: a new tag). */
interface PlannedMove {
  tag: string;
  from: number | null;
  to: number;
}

const questionOf = ({ tag, from, to }: PlannedMove): string =>
  from === null
    ? `Add the tag ${tag} at version ${to}?`
    : `Move ${tag} from version ${from} to version ${to}?`;

function moveText(entry: TagHistoryEntry): string {
  if (entry.version === null) return `deleted (was version ${entry.previousVersion})`;
  if (entry.previousVersion === null) return `created at version ${entry.version}`;
  return `version ${entry.previousVersion} → version ${entry.version}`;
}

function TagHistory({ slug, tag }: { slug: string; tag: string }) {
  const history = useQuery({
    queryKey: promptKeys.tagHistory(slug, tag),
    queryFn: () => tagHistory(slug, tag),
  });
  return (
    <>
      <h3 id="tag-history-title">History of {tag}</h3>
      {history.isPending && <p className="loading">Loading…</p>}
      {history.isError && <ErrorNotice error={history.error} />}
      {history.data?.length === 0 && <p className="muted">This tag has not moved since it was recorded.</p>}
      {history.data && history.data.length > 0 && (
        <div className="table-scroll">
          <table aria-labelledby="tag-history-title">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Move</th>
                <th scope="col">By</th>
              </tr>
            </thead>
            <tbody>
              {history.data.map((entry) => (
                <tr key={`${entry.movedAt}-${entry.version}-${entry.previousVersion}`}>
                  <td>{formatTime(entry.movedAt)}</td>
                  <td>{moveText(entry)}</td>
                  <td>
                    <code>{entry.movedBy}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function VersionSelect({
  id,
  value,
  versions,
  onChange,
}: {
  id: string;
  value: number;
  versions: PromptVersion[];
  onChange: (version: number) => void;
}) {
  return (
    <select id={id} value={value} onChange={(event) => onChange(Number(event.target.value))}>
      {versions.map((version) => (
        <option key={version.version} value={version.version}>
          version {version.version}
        </option>
      ))}
    </select>
  );
}

function TagRow({
  tag,
  at,
  versions,
  onPlan,
  onShowHistory,
}: {
  tag: string;
  at: number;
  versions: PromptVersion[];
  onPlan: (move: PlannedMove) => void;
  onShowHistory: () => void;
}) {
  const [target, setTarget] = useState(versions[0]?.version ?? at);
  const selectId = `move-${tag}`;
  return (
    <tr>
      <th scope="row">{tag}</th>
      <td>version {at}</td>
      <td>
        <div className="row-actions">
          <label className="sr-only" htmlFor={selectId}>
            Move {tag} to
          </label>
          <VersionSelect id={selectId} value={target} versions={versions} onChange={setTarget} />
          <button
            type="button"
            className="small"
            disabled={target === at}
            onClick={() => onPlan({ tag, from: at, to: target })}
          >
            Move {tag}
          </button>
        </div>
      </td>
      <td>
        <button type="button" className="small ghost" onClick={onShowHistory}>
          History of {tag}
        </button>
      </td>
    </tr>
  );
}

function AddTagForm({
  versions,
  onPlan,
}: {
  versions: PromptVersion[];
  onPlan: (move: PlannedMove) => void;
}) {
  const [name, setName] = useState("");
  const [version, setVersion] = useState(versions[0]?.version ?? 1);
  return (
    <form
      className="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        if (name.trim()) onPlan({ tag: name.trim(), from: null, to: version });
      }}
    >
      <div>
        <label htmlFor="new-tag-name">New tag</label>
        <input id="new-tag-name" value={name} onChange={(event) => setName(event.target.value)} />
      </div>
      <div>
        <label htmlFor="new-tag-version">At</label>
        <VersionSelect id="new-tag-version" value={version} versions={versions} onChange={setVersion} />
      </div>
      <button type="submit" disabled={name.trim() === ""}>
        Add tag
      </button>
    </form>
  );
}

/**
 * The prompt's tags: where each points, a move behind a confirmation naming both versions (sent
 * with `expectedVersion`, so a move someone else made meanwhile is refused, not overwritten), and
 * the history of one tag.
 */
export function PromptTagsSection({
  summary,
  versions,
}: {
  summary: PromptSummary;
  versions: PromptVersion[];
}) {
  const queryClient = useQueryClient();
  const tags = Object.entries(summary.tags).sort(([a], [b]) => a.localeCompare(b));
  const [historyTag, setHistoryTag] = useState<string | null>(null);
  const [planned, setPlanned] = useState<PlannedMove | null>(null);
  const move = useMutation({
    mutationFn: (plan: PlannedMove) => moveTag(summary.slug, plan.tag, plan.to, plan.from),
    onSettled: () => queryClient.invalidateQueries({ queryKey: promptKeys.prompt(summary.slug) }),
    onSuccess: (_moved, plan) => {
      setPlanned(null);
      setHistoryTag(plan.tag);
      void queryClient.invalidateQueries({ queryKey: promptKeys.list });
    },
    onError: () => setPlanned(null),
  });
  const shownHistory = historyTag ?? tags[0]?.[0] ?? null;
  return (
    <section className="panel" aria-labelledby="tags-title">
      <h2 id="tags-title">Tags</h2>
      {move.isError && <ErrorNotice error={move.error} />}
      {tags.length === 0 ? (
        <EmptyState title="No tags">
          Add one below, e.g. production, and run the prompt by its tag.
        </EmptyState>
      ) : (
        <div className="table-scroll">
          <table aria-labelledby="tags-title">
            <thead>
              <tr>
                <th scope="col">Tag</th>
                <th scope="col">Points at</th>
                <th scope="col">Move to</th>
                <th scope="col">History</th>
              </tr>
            </thead>
            <tbody>
              {tags.map(([tag, at]) => (
                <TagRow
                  key={`${tag}-${at}`}
                  tag={tag}
                  at={at}
                  versions={versions}
                  onPlan={(plan) => {
                    move.reset();
                    setPlanned(plan);
                  }}
                  onShowHistory={() => setHistoryTag(tag)}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <AddTagForm
        versions={versions}
        onPlan={(plan) => {
          move.reset();
          setPlanned(plan);
        }}
      />
      {shownHistory && <TagHistory slug={summary.slug} tag={shownHistory} />}
      <ConfirmDialog
        open={planned !== null}
        title={planned ? questionOf(planned) : ""}
        confirmLabel={planned?.from === null ? "Add tag" : "Move tag"}
        busy={move.isPending}
        closeOnConfirm={false}
        onConfirm={() => planned && move.mutate(planned)}
        onClose={() => setPlanned(null)}
      >
        <p>Runs that name this tag use the new version from the moment it moves.</p>
      </ConfirmDialog>
    </section>
  );
}
