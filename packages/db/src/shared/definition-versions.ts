/**
 * Rules of versioned, tagged definitions (prompts and workflows alike, docs/PRODUCT-RULES.md
 * "Prompts over REST", docs/WORKFLOWS.md "Workflow files"): which version a selector picks, the
 * pages of definitions (slug order) and of versions (newest first), and which version a push
 * lands on. Written over column maps, so each dialect's tables of either kind use them.
 */
import type { VersionSelector } from "@promptrun/core";
import { type AnyColumn, and, eq, gt, lt, type SQL } from "drizzle-orm";
import { decodeCursor } from "./cursor.ts";

/** The definitions table (prompts, workflows): one row per slug with its latest version number. */
export interface OwnerColumns {
  tenantId: AnyColumn;
  slug: AnyColumn;
  latestVersion: AnyColumn;
}

/** The condition that picks the selected version among a definition's (a tag needs its tags table joined). */
export const selectedVersionCondition = (
  tables: { owners: OwnerColumns; versions: { id: AnyColumn; version: AnyColumn }; tags: { tag: AnyColumn } },
  selector: VersionSelector,
): SQL => {
  switch (selector.kind) {
    case "id":
      return eq(tables.versions.id, selector.id);
    case "number":
      return eq(tables.versions.version, selector.version);
    case "latest":
      return eq(tables.versions.version, tables.owners.latestVersion);
    case "tag":
      return eq(tables.tags.tag, selector.tag);
  }
};

/** A tenant's definitions after the page's cursor, in slug order. */
export const slugPageCondition = (
  owners: Pick<OwnerColumns, "tenantId" | "slug">,
  tenantId: string,
  cursor: string | null | undefined,
): SQL | undefined =>
  and(
    eq(owners.tenantId, tenantId),
    cursor ? gt(owners.slug, decodeCursor(cursor, ["string"])[0]) : undefined,
  );

/** One definition's versions after the page's cursor (newest first); needs the definitions table joined. */
export const versionPageCondition = (
  tables: { owners: Pick<OwnerColumns, "tenantId" | "slug">; versions: { version: AnyColumn } },
  tenantId: string,
  slug: string,
  cursor: string | null | undefined,
): SQL | undefined =>
  and(
    eq(tables.owners.tenantId, tenantId),
    eq(tables.owners.slug, slug),
    cursor ? lt(tables.versions.version, decodeCursor(cursor, ["number"])[0]) : undefined,
  );

/** tag → version number, per definition, from (owner id, tag, version) rows. */
export const tagMapsOf = (
  rows: readonly { ownerId: string; tag: string; version: number }[],
): Map<string, Record<string, number>> => {
  const maps = new Map<string, Record<string, number>>();
  for (const row of rows) {
    const map = maps.get(row.ownerId) ?? {};
    map[row.tag] = row.version;
    maps.set(row.ownerId, map);
  }
  return maps;
};

/**
 * The version a push lands on: the newest when its content is the same (`created` false: nothing
 * to write), else a new one numbered after the latest (to insert, and to make the latest).
 */
export const landedVersion = <V extends { contentHash: string }>(
  contentHash: string,
  latestVersion: number,
  newest: V | null,
  build: (version: number) => V,
): { version: V; created: boolean } =>
  newest && newest.contentHash === contentHash
    ? { version: newest, created: false }
    : { version: build(latestVersion + 1), created: true };
