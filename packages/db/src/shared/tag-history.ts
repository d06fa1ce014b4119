import type { TagHistoryRecord } from "@promptrun/core";
import { type AnyColumn, and, eq, lt, or, type SQL } from "drizzle-orm";
import { decodeCursor, pageFrom } from "./cursor.ts";

interface TagHistoryTable {
  id: AnyColumn;
  tenantId: AnyColumn;
  promptId: AnyColumn;
  tag: AnyColumn;
  version: AnyColumn;
  previousVersion: AnyColumn;
  movedAt: AnyColumn;
  movedBy: AnyColumn;
}

/** The select of a history row: the record plus its id (the cursor's tie-breaker). */
export const historyColumns = <T extends TagHistoryTable>(table: T) => ({
  id: table.id as T["id"],
  version: table.version as T["version"],
  previousVersion: table.previousVersion as T["previousVersion"],
  movedAt: table.movedAt as T["movedAt"],
  movedBy: table.movedBy as T["movedBy"],
});

/** The tenant's prompt `slug`, its `tag`, moves older than the cursor (movedAt ms, id). */
export const historyCondition = (
  {
    prompts,
    promptTagHistory,
  }: { prompts: { tenantId: AnyColumn; slug: AnyColumn }; promptTagHistory: TagHistoryTable },
  tenantId: string,
  slug: string,
  tag: string,
  cursor: string | null | undefined,
): SQL | undefined => {
  const after = cursor ? decodeCursor(cursor, ["number", "string"]) : null;
  return and(
    eq(prompts.tenantId, tenantId),
    eq(prompts.slug, slug),
    eq(promptTagHistory.tag, tag),
    after
      ? or(
          lt(promptTagHistory.movedAt, new Date(after[0])),
          and(eq(promptTagHistory.movedAt, new Date(after[0])), lt(promptTagHistory.id, after[1])),
        )
      : undefined,
  );
};

type HistoryRow = TagHistoryRecord & { id: string };

/** A `limit + 1` query result as a page of records, newest first. */
export const historyPage = (rows: HistoryRow[], limit: number) => {
  const page = pageFrom(rows, limit, (row) => [row.movedAt.getTime(), row.id]);
  return {
    items: page.items.map(({ version, previousVersion, movedAt, movedBy }) => ({
      version,
      previousVersion,
      movedAt,
      movedBy,
    })),
    nextCursor: page.nextCursor,
  };
};
