import { type ComponentProps, lazy, Suspense } from "react";
import type { PromptFileEditor } from "./prompt-file-editor.tsx";

const Editor = lazy(async () => ({ default: (await import("./prompt-file-editor.tsx")).PromptFileEditor }));

/**
 * The prompt file editor for screens where it is not the first thing shown (a new prompt on the
 * prompts list, an edit in the playground): its code (CodeMirror, ~540 KiB) loads when it is
 * first opened, not with the screen (docs/console.md "Size and load time").
 */
export function LazyPromptFileEditor(props: ComponentProps<typeof PromptFileEditor>) {
  return (
    <Suspense fallback={<p className="loading">Loading the editor…</p>}>
      <Editor {...props} />
    </Suspense>
  );
}
