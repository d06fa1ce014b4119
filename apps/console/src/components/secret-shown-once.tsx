import { useEffect, useRef, useState } from "react";
import "./secret-shown-once.css";

/**
 * A secret the API returns once (a new API key, a webhook's signing secret): shown with a copy
 * button and a warning until dismissed; it lives only in the caller's state, never stored.
 */
export function SecretShownOnce({
  title,
  secret,
  children,
  onDone,
}: {
  title: string;
  secret: string;
  /** What the secret is for and what to do with it. */
  children: React.ReactNode;
  onDone: () => void;
}) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  const codeRef = useRef<HTMLElement>(null);
  const [copy, setCopy] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => headingRef.current?.focus(), []);
  const copyToClipboard = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopy("copied");
    } catch {
      // No clipboard access (permissions, an insecure origin): select it for a manual copy.
      const range = document.createRange();
      if (codeRef.current) range.selectNodeContents(codeRef.current);
      window.getSelection()?.removeAllRanges();
      window.getSelection()?.addRange(range);
      setCopy("failed");
    }
  };
  return (
    <section className="secret-once" aria-labelledby="secret-once-title">
      <h3 id="secret-once-title" ref={headingRef} tabIndex={-1}>
        {title}
      </h3>
      <p className="secret-once-warning">
        <strong>Copy it now: it is shown only this once.</strong> {children}
      </p>
      <code ref={codeRef} className="secret-once-value" data-testid="secret-once-value">
        {secret}
      </code>
      <div className="secret-once-actions">
        <button type="button" onClick={copyToClipboard}>
          Copy
        </button>
        <button type="button" className="ghost" onClick={onDone}>
          Done, I saved it
        </button>
        <span role="status" className="secret-once-copy-status">
          {copy === "copied" ? "Copied to the clipboard." : ""}
          {copy === "failed" ? "Could not reach the clipboard: the text is selected, copy it by hand." : ""}
        </span>
      </div>
    </section>
  );
}
