import { storeKindOf } from "./open-store.ts";

/** The URL with its password shown as `***`, for messages and logs; `fallback` when it does not parse. */
export const redactUrl = (url: string, fallback = "<unparseable URL>"): string => {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return fallback;
  }
};

/** A DATABASE_URL for logs: a SQLite path as it is, a Postgres URL without its password. */
export const redactDatabaseUrl = (url: string): string =>
  storeKindOf(url) === "postgres" ? redactUrl(url, "postgres://…") : url;
