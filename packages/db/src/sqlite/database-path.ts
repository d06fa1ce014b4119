import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PromptrunError } from "@promptrun/core";

/** In-memory database marker, as bun:sqlite understands it. */
export const MEMORY_PATH = ":memory:";

/**
 * Turns a SQLite `DATABASE_URL` into a file path: `file:./data/x.db` (relative to the working
 * directory), `file:/abs/x.db`, `file:///abs/x.db`, a bare path, or `:memory:`.
 */
export const databasePath = (url: string, workingDirectory = process.cwd()): string => {
  const trimmed = url.trim();
  if (trimmed === MEMORY_PATH || trimmed === "file::memory:") return MEMORY_PATH;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) && !trimmed.startsWith("file://")) {
    throw new PromptrunError("invalid", `not a SQLite URL: ${trimmed.split(":")[0]}:// (use file:<path>)`);
  }
  const withoutQuery = trimmed.split("?")[0] ?? "";
  const path = withoutQuery.startsWith("file://")
    ? fileURLToPath(withoutQuery)
    : withoutQuery.startsWith("file:")
      ? withoutQuery.slice("file:".length)
      : withoutQuery;
  if (path === "") throw new PromptrunError("invalid", "empty SQLite database path");
  return isAbsolute(path) ? path : resolve(workingDirectory, path);
};
