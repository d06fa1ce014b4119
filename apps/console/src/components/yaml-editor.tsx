import { yaml } from "@codemirror/lang-yaml";
import { type Diagnostic, lintGutter, setDiagnostics } from "@codemirror/lint";
import { basicSetup, EditorView } from "codemirror";
import { useEffect, useRef } from "react";
import "./code-editor.css";

/** A problem to mark in the text: character offsets and the words shown at that place. */
export interface EditorProblem {
  from: number;
  to: number;
  message: string;
}

/**
 * A CodeMirror 6 YAML editor. The text is owned by the caller (`value`/`onChange`); the
 * `problems` the caller computes are shown inline (underline, gutter marker, tooltip) with
 * @codemirror/lint. Tab is left to move focus on (no indent-with-Tab): keyboard users can leave it.
 */
export function YamlEditor({
  value,
  onChange,
  problems,
  labelledBy,
}: {
  value: string;
  onChange: (text: string) => void;
  problems: EditorProblem[];
  labelledBy: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  const initialValue = useRef(value);

  useEffect(() => {
    if (!host.current) return;
    const editor = new EditorView({
      parent: host.current,
      doc: initialValue.current,
      extensions: [
        basicSetup,
        yaml(),
        lintGutter(),
        // tabindex says out loud what contenteditable already does (checkers then see the scroll area is reachable).
        EditorView.contentAttributes.of({ "aria-labelledby": labelledBy, tabindex: "0" }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChangeRef.current(update.state.doc.toString());
        }),
      ],
    });
    view.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
    };
  }, [labelledBy]);

  // A new text from outside (another version picked): replace the document.
  useEffect(() => {
    const editor = view.current;
    if (!editor || editor.state.doc.toString() === value) return;
    editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
  }, [value]);

  useEffect(() => {
    const editor = view.current;
    if (!editor) return;
    const length = editor.state.doc.length;
    const diagnostics: Diagnostic[] = problems.map((problem) => {
      const from = Math.min(problem.from, length);
      return {
        from,
        to: Math.min(Math.max(problem.to, from), length),
        severity: "error",
        message: problem.message,
      };
    });
    editor.dispatch(setDiagnostics(editor.state, diagnostics));
  }, [problems]);

  return <div className="code-editor" ref={host} />;
}
