import { type FormEvent, type KeyboardEvent, useState } from "react";

/** The message box: Enter sends, Shift+Enter adds a line. */
export function Composer({ onSend, disabled }: { onSend: (message: string) => void; disabled: boolean }) {
  const [draft, setDraft] = useState("");
  const submit = () => {
    const message = draft.trim();
    if (!message || disabled) return;
    onSend(message);
    setDraft("");
  };
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    submit();
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      submit();
    }
  };
  return (
    <form className="composer" onSubmit={onSubmit}>
      <textarea
        aria-label="Message"
        placeholder="Ask something…"
        rows={1}
        value={draft}
        onChange={(event) => setDraft(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <button type="submit" disabled={disabled || draft.trim() === ""} aria-label="Send">
        <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
          <path d="M3.4 20.4 21 12 3.4 3.6 3.4 10l12.6 2-12.6 2z" fill="currentColor" />
        </svg>
      </button>
    </form>
  );
}
