/** A moment from the API (ISO 8601) in the reader's locale; the exact instant in `title`. */
export function LocalTime({ iso, empty = "never" }: { iso: string | null; empty?: string }) {
  if (iso === null) return <span>{empty}</span>;
  return (
    <time dateTime={iso} title={iso}>
      {new Date(iso).toLocaleString()}
    </time>
  );
}
