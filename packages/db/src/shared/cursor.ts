import { PromptrunError } from "@promptrun/core";

/** Opaque page cursor: base64url of the JSON of the last item's sort key. */
export const encodeCursor = (key: readonly (string | number)[]): string =>
  Buffer.from(JSON.stringify(key), "utf8").toString("base64url");

/** Decodes a cursor made by encodeCursor, checking each element's type; invalid otherwise. */
export const decodeCursor = <const T extends readonly ("string" | "number")[]>(
  cursor: string,
  shape: T,
): { [K in keyof T]: T[K] extends "string" ? string : number } => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new PromptrunError("invalid", "invalid cursor");
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== shape.length ||
    !shape.every((type, index) => typeof parsed[index] === type)
  ) {
    throw new PromptrunError("invalid", "invalid cursor");
  }
  return parsed as { [K in keyof T]: T[K] extends "string" ? string : number };
};

/** Splits a `limit + 1` query result into the page and the cursor of its last item. */
export const pageFrom = <T>(
  rows: T[],
  limit: number,
  keyOf: (row: T) => readonly (string | number)[],
): { items: T[]; nextCursor: string | null } => {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(keyOf(last)) : null };
};
