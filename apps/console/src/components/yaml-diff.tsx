import { yaml } from "@codemirror/lang-yaml";
import { MergeView } from "@codemirror/merge";
import { EditorState } from "@codemirror/state";
import { EditorView, lineNumbers } from "@codemirror/view";
import { minimalSetup } from "codemirror";
import { useEffect, useRef, useState } from "react";
import "./code-editor.css";

const readOnlySide = (doc: string, label: string) => ({
  doc,
  extensions: [
    minimalSetup,
    lineNumbers(),
    yaml(),
    // Read-only but focusable: keyboard users can move through the text and copy from it.
    EditorState.readOnly.of(true),
    // Two columns on a phone are narrow: wrap rather than scroll sideways.
    EditorView.lineWrapping,
    EditorView.contentAttributes.of({ "aria-label": label, "aria-readonly": "true", tabindex: "0" }),
  ],
});

/**
 * Two texts side by side, read-only, with changed lines and words marked (@codemirror/merge);
 * long unchanged stretches are collapsed. Says in words how many places changed.
 */
export function YamlDiff({
  left,
  right,
  leftLabel,
  rightLabel,
}: {
  left: string;
  right: string;
  leftLabel: string;
  rightLabel: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const [changes, setChanges] = useState<number | null>(null);
  useEffect(() => {
    if (!host.current) return;
    const merge = new MergeView({
      parent: host.current,
      a: readOnlySide(left, leftLabel),
      b: readOnlySide(right, rightLabel),
      gutter: true,
      highlightChanges: true,
      collapseUnchanged: { margin: 3, minSize: 6 },
    });
    setChanges(merge.chunks.length);
    return () => merge.destroy();
  }, [left, right, leftLabel, rightLabel]);
  return (
    <div>
      <p className="diff-summary" aria-live="polite">
        {changes === null
          ? ""
          : changes === 0
            ? `${leftLabel} and ${rightLabel} have the same file.`
            : `${changes} changed ${changes === 1 ? "place" : "places"} from ${leftLabel} to ${rightLabel}.`}
      </p>
      <div className="diff-headings" aria-hidden="true">
        <span>{leftLabel}</span>
        <span>{rightLabel}</span>
      </div>
      <div className="code-diff" ref={host} />
    </div>
  );
}
