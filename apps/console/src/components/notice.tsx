/** An API error where it happened, in words (the server's `{"error"}` message). */
export function ErrorNotice({ error }: { error: unknown }) {
  const message = error instanceof Error ? error.message : String(error);
  return (
    <p className="notice notice-error" role="alert">
      {message}
    </p>
  );
}

/** What an empty list means, and what to do next. */
export function EmptyState({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <div className="empty-state">
      <h2>{title}</h2>
      <p>{children}</p>
    </div>
  );
}
