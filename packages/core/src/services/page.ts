import type { Page } from "@promptrun/contract";
import { invalid } from "../errors.ts";
import type { PageInput } from "../services.ts";

export const MAX_PAGE_LIMIT = 200;
/** A page stops growing before its items' JSON passes this many UTF-8 bytes (it keeps at least one). */
export const MAX_PAGE_BYTES = 4 * 1024 * 1024;

/** Transports validate page input; the services still keep the limit sane (1–200, default 50). */
export const clampPage = (page: PageInput): { cursor: string | null; limit: number } => ({
  cursor: page.cursor ?? null,
  limit: Math.min(MAX_PAGE_LIMIT, Math.max(1, Math.floor(page.limit) || 50)),
});

/** How many leading items fit in `maxBytes` of JSON; at least one, so paging always advances. */
export function countFitting(items: readonly unknown[], maxBytes: number): number {
  let bytes = 0;
  for (let index = 0; index < items.length; index++) {
    bytes += Buffer.byteLength(JSON.stringify(items[index]), "utf8");
    if (bytes > maxBytes) return Math.max(1, index);
  }
  return items.length;
}

/**
 * A store page bounded in bytes as well as in count. When the items would pass `maxBytes`, the
 * page is fetched again with the limit cut to what fits, so the store's own cursor points right
 * after the last item returned (a cursor cannot be made here; and the second read's items are the
 * ones that cursor belongs to, even if rows were added meanwhile). Rare: only oversized pages pay.
 */
export async function boundedPage<Row, Item>(
  fetch: (limit: number) => Promise<Page<Row>>,
  toItem: (row: Row) => Item,
  limit: number,
  maxBytes: number = MAX_PAGE_BYTES,
): Promise<Page<Item>> {
  let result = await fetch(limit);
  for (;;) {
    const items = result.items.map(toItem);
    const fitting = countFitting(items, maxBytes);
    if (fitting >= items.length) return { items, nextCursor: result.nextCursor };
    result = await fetch(fitting);
  }
}

/** Cursor of an offset-paged list (thread messages): opaque to clients, checked when read back. */
export const encodeOffsetCursor = (offset: number): string =>
  Buffer.from(JSON.stringify({ offset }), "utf8").toString("base64url");

export function decodeOffsetCursor(cursor: string | null | undefined): number {
  if (cursor === null || cursor === undefined) return 0;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    const offset = (parsed as { offset?: unknown } | null)?.offset;
    if (typeof offset === "number" && Number.isSafeInteger(offset) && offset >= 0) return offset;
  } catch {
    // Falls through to the error below.
  }
  throw invalid("invalid cursor");
}
