import type { PromptVersion } from "@promptrun/contract";
import { useMemo, useState } from "react";
import { Link } from "wouter";
import { YamlDiff } from "../components/yaml-diff.tsx";
import { versionYaml } from "./prompt-file-yaml.ts";
import { formatTime } from "./prompt-format.ts";

/** The version history, newest first, with a link to run each version in the playground. */
export function PromptVersionsSection({ slug, versions }: { slug: string; versions: PromptVersion[] }) {
  return (
    <section className="panel" aria-labelledby="versions-title">
      <h2 id="versions-title">Versions</h2>
      <div className="table-scroll">
        <table aria-labelledby="versions-title">
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Created</th>
              <th scope="col">Model</th>
              <th scope="col">Tags</th>
              <th scope="col">Description</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {versions.map((version) => (
              <tr key={version.id}>
                <th scope="row">version {version.version}</th>
                <td>{formatTime(version.createdAt)}</td>
                <td>
                  <code>{version.model}</code>
                </td>
                <td>
                  {version.tags.length > 0 ? version.tags.join(", ") : <span className="muted">—</span>}
                </td>
                <td>{version.description ?? <span className="muted">—</span>}</td>
                <td>
                  <Link href={`/playground/${slug}?version=${version.version}`}>
                    Run version {version.version}
                  </Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function VersionPicker({
  id,
  label,
  value,
  versions,
  onChange,
}: {
  id: string;
  label: string;
  value: number;
  versions: PromptVersion[];
  onChange: (version: number) => void;
}) {
  return (
    <div>
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(Number(event.target.value))}>
        {versions.map((version) => (
          <option key={version.version} value={version.version}>
            version {version.version}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * Two chosen versions of the prompt file side by side (messages, model, params, tools, output
 * schema — the whole file as YAML), the newest against the one before by default.
 */
export function PromptDiffSection({
  versions,
  compare,
  onCompare,
}: {
  versions: PromptVersion[];
  compare: [number, number] | null;
  onCompare: (pair: [number, number]) => void;
}) {
  const newest = versions[0]?.version ?? 1;
  const [left, right] = compare ?? [versions[1]?.version ?? newest, newest];
  const byNumber = useMemo(() => new Map(versions.map((version) => [version.version, version])), [versions]);
  const leftVersion = byNumber.get(left);
  const rightVersion = byNumber.get(right);
  const [leftText, rightText] = useMemo(
    () => [leftVersion ? versionYaml(leftVersion) : "", rightVersion ? versionYaml(rightVersion) : ""],
    [leftVersion, rightVersion],
  );
  const [shown, setShown] = useState(true);
  return (
    <section className="panel" aria-labelledby="diff-title">
      <h2 id="diff-title">Compare versions</h2>
      {versions.length < 2 ? (
        <p className="muted">
          There is one version so far. Save an edit below (or push a changed file) to compare two versions.
        </p>
      ) : (
        <>
          <div className="inline-form">
            <VersionPicker
              id="diff-left"
              label="From"
              value={left}
              versions={versions}
              onChange={(v) => onCompare([v, right])}
            />
            <VersionPicker
              id="diff-right"
              label="To"
              value={right}
              versions={versions}
              onChange={(v) => onCompare([left, v])}
            />
            <button
              type="button"
              className="ghost"
              onClick={() => setShown((open) => !open)}
              aria-expanded={shown}
            >
              {shown ? "Hide the diff" : "Show the diff"}
            </button>
          </div>
          {shown && (
            <YamlDiff
              left={leftText}
              right={rightText}
              leftLabel={`version ${left}`}
              rightLabel={`version ${right}`}
            />
          )}
        </>
      )}
    </section>
  );
}
