import type { PromptVersion, PushResult } from "@promptrun/contract";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { Link, useLocation } from "wouter";
import { ErrorNotice } from "../components/notice.tsx";
import { PromptFileEditor } from "../components/prompt-file-editor.tsx";
import { getPromptSummary, listVersions, promptKeys } from "./prompt-api.ts";
import { versionYaml } from "./prompt-file-yaml.ts";
import { PromptTagsSection } from "./prompt-tags-section.tsx";
import { PromptDiffSection, PromptVersionsSection } from "./prompt-versions-section.tsx";
import { TagChips } from "./prompts-screen.tsx";
import "./prompts.css";

/** The prompt file of a chosen version in the YAML editor; saving pushes it as the next version. */
function PromptEditSection({
  versions,
  onSaved,
}: {
  versions: PromptVersion[];
  onSaved: (result: PushResult) => void;
}) {
  const [base, setBase] = useState<number | null>(null);
  // The editor starts over only when a base version is picked, not after a save (its text is the saved file).
  const [picks, setPicks] = useState(0);
  const baseVersion = versions.find((version) => version.version === base) ?? versions[0];
  const text = useMemo(() => (baseVersion ? versionYaml(baseVersion) : ""), [baseVersion]);
  if (!baseVersion) return null;
  return (
    <section className="panel" aria-labelledby="edit-title">
      <h2 id="edit-title">Edit the prompt file</h2>
      <p className="muted">
        Saving pushes the file as a new version; tags stay where they are until you move them above.
      </p>
      <div className="inline-form">
        <div>
          <label htmlFor="edit-base">Start from</label>
          <select
            id="edit-base"
            value={baseVersion.version}
            onChange={(event) => {
              setBase(Number(event.target.value));
              setPicks((count) => count + 1);
            }}
          >
            {versions.map((version) => (
              <option key={version.version} value={version.version}>
                version {version.version}
              </option>
            ))}
          </select>
        </div>
      </div>
      <PromptFileEditor
        key={picks}
        initialText={text}
        headingId="edit-title"
        onSaved={(result) => {
          onSaved(result);
          if (result.created) setBase(result.version);
        }}
      />
    </section>
  );
}

/** One prompt: its tags (move with a confirmation, history), versions, a diff of two, and the editor. */
export function PromptDetailScreen({ params }: { params: { slug: string } }) {
  const { slug } = params;
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [compare, setCompare] = useState<[number, number] | null>(null);
  const summary = useQuery({ queryKey: promptKeys.summary(slug), queryFn: () => getPromptSummary(slug) });
  const versions = useQuery({ queryKey: promptKeys.versions(slug), queryFn: () => listVersions(slug) });

  const onSaved = (result: PushResult) => {
    void queryClient.invalidateQueries({ queryKey: promptKeys.list });
    if (result.slug !== slug) {
      navigate(`/prompts/${result.slug}`);
      return;
    }
    void queryClient.invalidateQueries({ queryKey: promptKeys.prompt(slug) });
    if (result.created && result.version > 1) setCompare([result.version - 1, result.version]);
  };

  return (
    <section aria-labelledby="screen-title">
      <div className="screen-head">
        <div>
          <p>
            <Link href="/prompts">Prompts</Link> /
          </p>
          <h1 id="screen-title">{slug}</h1>
          {summary.data && (
            <p>
              {summary.data.description ?? "No description"} · latest: version {summary.data.latestVersion}
            </p>
          )}
        </div>
        <Link href={`/playground/${slug}`}>Open in the playground</Link>
      </div>
      {summary.data && <TagChips tags={summary.data.tags} />}
      {(summary.isPending || versions.isPending) && <p className="loading">Loading the prompt…</p>}
      {summary.isError && <ErrorNotice error={summary.error} />}
      {versions.isError && !summary.isError && <ErrorNotice error={versions.error} />}
      {summary.data && versions.data && (
        <>
          <PromptTagsSection summary={summary.data} versions={versions.data} />
          <PromptVersionsSection slug={slug} versions={versions.data} />
          <PromptDiffSection versions={versions.data} compare={compare} onCompare={setCompare} />
          <PromptEditSection versions={versions.data} onSaved={onSaved} />
        </>
      )}
    </section>
  );
}
