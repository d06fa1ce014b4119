import { useState } from "react";

/** A message box: Enter sends. */
export function Composer({ onSend, disabled }: { onSend: (text: string) => void; disabled: boolean }) {
  const [text, setText] = useState("");
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        if (!text.trim() || disabled) return;
        onSend(text);
        setText("");
      }}
    >
      <input aria-label="Message" value={text} onChange={(event) => setText(event.target.value)} />
      <button type="submit" disabled={disabled}>
        Send
      </button>
    </form>
  );
}
