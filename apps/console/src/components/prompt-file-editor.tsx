import type { PushResult } from "@promptrun/contract";
import { useMemo, useState } from "react";
import { pushPromptFile } from "../screens/prompt-api.ts";
import { checkPromptFileText, problemsFromServerMessage } from "../screens/prompt-file-yaml.ts";
import { ErrorNotice } from "./notice.tsx";
import { SavedNotice } from "./saved-notice.tsx";
import { YamlEditor } from "./yaml-editor.tsx";

/** The server's refusal of a save, kept with the text it was about (stale once the text changes). */
interface Refusal {
  text: string;
  error: unknown;
}

/**
 * A prompt file as YAML, checked as it is typed (YAML syntax, then the contract's schema), each
 * problem at its line; "Save as new version" pushes it (`POST /api/v1/prompts`). A refusal from
 * the server is shown above, and at the line of the field it names.
 */
export function PromptFileEditor({
  initialText,
  headingId,
  onSaved,
  announceSaved = true,
}: {
  initialText: string;
  headingId: string;
  onSaved: (result: PushResult) => void;
  /** False when the caller says "saved" itself (it replaces this editor after a save). */
  announceSaved?: boolean;
}) {
  const [text, setText] = useState(initialText);
  const [saving, setSaving] = useState(false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [saved, setSaved] = useState<PushResult | null>(null);
  const checked = useMemo(() => checkPromptFileText(text), [text]);
  const current = refusal?.text === text ? refusal : null;
  const serverProblems = useMemo(
    () =>
      current && current.error instanceof Error ? problemsFromServerMessage(text, current.error.message) : [],
    [current, text],
  );
  const problems = checked.problems.length > 0 ? checked.problems : serverProblems;

  const save = async () => {
    setSaving(true);
    setRefusal(null);
    setSaved(null);
    try {
      const result = await pushPromptFile(checked.file);
      setSaved(result);
      onSaved(result);
    } catch (error) {
      setRefusal({ text, error });
    } finally {
      setSaving(false);
    }
  };

  return (
    <div className="prompt-file-editor">
      <YamlEditor
        value={text}
        onChange={(next) => {
          setText(next);
          setSaved(null);
        }}
        problems={problems}
        labelledBy={headingId}
      />
      {problems.length > 0 && (
        <ul className="problems" aria-label="Problems in the prompt file">
          {problems.map((problem) => (
            <li key={`${problem.from}:${problem.message}`}>
              <span className="problem-line">Line {problem.line}:</span> {problem.message}
            </li>
          ))}
        </ul>
      )}
      {current && <ErrorNotice error={current.error} />}
      {saved && announceSaved && <SavedNotice saved={saved} />}
      <div className="editor-actions">
        <button type="button" onClick={save} disabled={saving || checked.problems.length > 0}>
          {saving ? "Saving…" : "Save as new version"}
        </button>
        {checked.problems.length > 0 && <span className="muted">Fix the problems above to save.</span>}
      </div>
    </div>
  );
}
