import type { Database } from "bun:sqlite";

/**
 * `PRAGMA data_version` of the connection, read at most once per event-loop turn. It changes only
 * when ANOTHER connection commits (the CLI, another process); the stores' caches compare it before
 * answering. Each read is a read transaction (two lock syscalls), and a create-run request used to
 * read it three times: now a change made elsewhere is seen from the next turn on.
 */
export function createDataVersionProbe(raw: Database): () => number {
  const statement = raw.prepare<{ data_version: number }, []>("PRAGMA data_version");
  let current: number | null = null;
  const forget = () => {
    current = null;
  };
  return () => {
    if (current === null) {
      current = statement.get()?.data_version ?? -1;
      setImmediate(forget);
    }
    return current;
  };
}
