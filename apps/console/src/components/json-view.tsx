/** A JSON value, indented, in a scrollable block (a string is shown as it is). */
export function JsonView({ value }: { value: unknown }) {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable block must be reachable by keyboard to scroll it.
    <pre className="json-view" tabIndex={0}>
      {text ?? "null"}
    </pre>
  );
}
