import type { PromptListPage, PromptStore, PromptVersionRecord, VersionSelector } from "@promptrun/core";
import { type AnyColumn, and, or, type SQL, sql, type Table } from "drizzle-orm";
import {
  landedVersion,
  selectedVersionCondition,
  slugPageCondition,
  tagMapsOf,
  versionPageCondition,
} from "./definition-versions.ts";
import { pickColumns } from "./pick-columns.ts";

interface PromptVersionTable {
  id: AnyColumn;
  promptId: AnyColumn;
  tenantId: AnyColumn;
  version: AnyColumn;
  definition: AnyColumn;
  contentHash: AnyColumn;
  createdAt: AnyColumn;
}

interface PromptTables {
  prompts: { tenantId: AnyColumn; slug: AnyColumn; latestVersion: AnyColumn };
  promptVersions: PromptVersionTable;
  promptTags: { tag: AnyColumn };
}

type PgOrSqliteTagTable = Table & { promptId: AnyColumn; tag: AnyColumn };

const VERSION_KEY_COLUMNS = ["id", "promptId", "tenantId"] as const;
const VERSION_RECORD_COLUMNS = ["version", "definition", "contentHash", "createdAt"] as const;

/** A PromptVersionRecord's select: the version's columns plus its prompt's slug (joined). */
export const promptVersionColumns = <V extends PromptVersionTable, P extends { slug: AnyColumn }>(
  promptVersions: V,
  prompts: P,
): Pick<V, (typeof VERSION_KEY_COLUMNS)[number] | (typeof VERSION_RECORD_COLUMNS)[number]> & {
  slug: P["slug"];
} => ({
  // The record's key order: the slug follows the tenant.
  ...pickColumns(promptVersions, VERSION_KEY_COLUMNS),
  slug: prompts.slug,
  ...pickColumns(promptVersions, VERSION_RECORD_COLUMNS),
});

/** The condition that picks the selected version among a prompt's (a tag needs prompt_tags joined). */
export const versionSelectorCondition = (
  { prompts, promptVersions, promptTags }: PromptTables,
  selector: VersionSelector,
): SQL => selectedVersionCondition({ owners: prompts, versions: promptVersions, tags: promptTags }, selector);

/** `%`, `_` and the escape character itself match literally in a LIKE pattern with `escape '\\'`. */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (match) => `\\${match}`);

/**
 * A tenant's prompts after the page's cursor (in slug order), narrowed by `q` (slug or the
 * latest version's `description`, case-insensitive substring) and `tag` (prompts having it).
 * `description` is the dialect's expression of the joined latest version's description.
 */
export const promptListCondition = (
  tables: {
    prompts: { id: AnyColumn; tenantId: AnyColumn; slug: AnyColumn };
    promptTags: PgOrSqliteTagTable;
  },
  tenantId: string,
  page: PromptListPage,
  description: SQL,
): SQL | undefined => {
  const { prompts, promptTags } = tables;
  const pattern = page.q ? `%${escapeLike(page.q.toLowerCase())}%` : null;
  return and(
    slugPageCondition(prompts, tenantId, page.cursor),
    pattern === null
      ? undefined
      : or(
          sql`lower(${prompts.slug}) like ${pattern} escape '\\'`,
          sql`lower(${description}) like ${pattern} escape '\\'`,
        ),
    page.tag
      ? sql`exists (select 1 from ${promptTags} where ${promptTags.promptId} = ${prompts.id} and ${promptTags.tag} = ${page.tag})`
      : undefined,
  );
};

/** One prompt's versions after the page's cursor (newest first); needs prompts joined. */
export const versionListCondition = (
  { prompts, promptVersions }: Pick<PromptTables, "prompts" | "promptVersions">,
  tenantId: string,
  slug: string,
  cursor: string | null | undefined,
): SQL | undefined =>
  versionPageCondition({ owners: prompts, versions: promptVersions }, tenantId, slug, cursor);

/** tag → version number, per prompt, from (promptId, tag, version) rows. */
export const tagMapsFrom = (
  rows: readonly { promptId: string; tag: string; version: number }[],
): Map<string, Record<string, number>> =>
  tagMapsOf(rows.map(({ promptId, ...row }) => ({ ownerId: promptId, ...row })));

/** What PromptStore.pushVersion is given. */
type VersionPush = Parameters<PromptStore["pushVersion"]>[0];

/**
 * The version a push lands on: the prompt's newest when its content is the same (`created`
 * false: nothing to write), else a new one numbered after it (to insert, and to make the
 * prompt's latest).
 */
export const pushedVersion = (
  input: VersionPush,
  prompt: { id: string; latestVersion: number },
  newest: PromptVersionRecord | null,
): { version: PromptVersionRecord; created: boolean } =>
  landedVersion(input.contentHash, prompt.latestVersion, newest, (version) => ({
    id: input.newVersionId,
    promptId: prompt.id,
    tenantId: input.tenantId,
    slug: input.slug,
    version,
    definition: input.definition,
    contentHash: input.contentHash,
    createdAt: input.at,
  }));
