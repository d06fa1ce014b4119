import type { Page } from "@promptrun/contract";
import { invalid } from "../../errors.ts";

/** Opaque cursor: base64url JSON of the last item's sort key. */
export const encodeCursor = (key: unknown): string =>
  Buffer.from(JSON.stringify(key), "utf8").toString("base64url");

export function decodeCursor<T>(cursor: string, isKey: (value: unknown) => value is T): T {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (isKey(value)) return value;
  } catch {
    // fall through to the error below
  }
  throw invalid("malformed cursor");
}

/**
 * Keyset pagination over items already sorted by `sortKey`: returns the items after the cursor's
 * key (strictly, by `isAfter`), up to `limit`, and a cursor when more remain.
 */
export function paginate<T, K>(
  sorted: T[],
  page: { cursor?: string | null; limit: number },
  sortKey: (item: T) => K,
  isAfter: (item: T, cursorKey: K) => boolean,
  isKey: (value: unknown) => value is K,
): Page<T> {
  const cursorKey = page.cursor ? decodeCursor(page.cursor, isKey) : undefined;
  const remaining = cursorKey === undefined ? sorted : sorted.filter((item) => isAfter(item, cursorKey));
  const items = remaining.slice(0, page.limit);
  const last = items.at(-1);
  const nextCursor = remaining.length > page.limit && last !== undefined ? encodeCursor(sortKey(last)) : null;
  return { items, nextCursor };
}

export const isString = (value: unknown): value is string => typeof value === "string";
export const isNumber = (value: unknown): value is number => typeof value === "number";
export const isTimeAndId = (value: unknown): value is [number, string] =>
  Array.isArray(value) && value.length === 2 && typeof value[0] === "number" && typeof value[1] === "string";

/** Records leave and enter the store as copies, like rows of a real database. */
export const copy = <T>(value: T): T => structuredClone(value);
