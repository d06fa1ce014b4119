import type { PromptRecord, PromptStore, PromptVersionRecord, VersionSelector } from "@promptrun/core";
import { and, asc, desc, eq, gt, inArray, lt, type SQL } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { prompts, promptTags, promptVersions } from "../schema/sqlite.ts";
import { decodeCursor, pageFrom } from "./cursor.ts";
import type { SqliteContext } from "./sqlite-context.ts";
import { withConstraintErrors } from "./sqlite-errors.ts";

/** A connection or an open transaction: both offer the same synchronous query builder. */
type Queryable = Pick<BunSQLiteDatabase, "select" | "insert" | "update">;

const versionColumns = {
  id: promptVersions.id,
  promptId: promptVersions.promptId,
  tenantId: promptVersions.tenantId,
  slug: prompts.slug,
  version: promptVersions.version,
  definition: promptVersions.definition,
  contentHash: promptVersions.contentHash,
  createdAt: promptVersions.createdAt,
};

const selectorCondition = (selector: VersionSelector): SQL | undefined => {
  switch (selector.kind) {
    case "id":
      return eq(promptVersions.id, selector.id);
    case "number":
      return eq(promptVersions.version, selector.version);
    case "latest":
      return eq(promptVersions.version, prompts.latestVersion);
    case "tag":
      return eq(promptTags.tag, selector.tag);
  }
};

/** Always scoped by tenant AND slug: an id of another prompt or tenant resolves to nothing. */
const resolve = (
  query: Queryable,
  tenantId: string,
  slug: string,
  selector: VersionSelector,
): PromptVersionRecord | null => {
  const scope = and(eq(prompts.tenantId, tenantId), eq(prompts.slug, slug), selectorCondition(selector));
  const base = query
    .select(versionColumns)
    .from(promptVersions)
    .innerJoin(prompts, eq(prompts.id, promptVersions.promptId));
  const row =
    selector.kind === "tag"
      ? base
          .innerJoin(
            promptTags,
            and(eq(promptTags.promptId, prompts.id), eq(promptTags.versionId, promptVersions.id)),
          )
          .where(scope)
          .get()
      : base.where(scope).get();
  return row ?? null;
};

const tagsOfVersion = (query: Queryable, versionId: string): string[] =>
  query
    .select({ tag: promptTags.tag })
    .from(promptTags)
    .where(eq(promptTags.versionId, versionId))
    .orderBy(asc(promptTags.tag))
    .all()
    .map((row) => row.tag);

const pointTag = (query: Queryable, version: PromptVersionRecord, tag: string, at: Date): void => {
  query
    .insert(promptTags)
    .values({ promptId: version.promptId, tag, versionId: version.id, updatedAt: at })
    .onConflictDoUpdate({
      target: [promptTags.promptId, promptTags.tag],
      set: { versionId: version.id, updatedAt: at },
    })
    .run();
  query.update(prompts).set({ updatedAt: at }).where(eq(prompts.id, version.promptId)).run();
};

/** tag → version number, for each of the given prompts. */
const tagMaps = (query: Queryable, promptIds: string[]): Map<string, Record<string, number>> => {
  const maps = new Map<string, Record<string, number>>();
  if (promptIds.length === 0) return maps;
  const rows = query
    .select({ promptId: promptTags.promptId, tag: promptTags.tag, version: promptVersions.version })
    .from(promptTags)
    .innerJoin(promptVersions, eq(promptVersions.id, promptTags.versionId))
    .where(inArray(promptTags.promptId, promptIds))
    .orderBy(asc(promptTags.tag))
    .all();
  for (const row of rows) {
    const map = maps.get(row.promptId) ?? {};
    map[row.tag] = row.version;
    maps.set(row.promptId, map);
  }
  return maps;
};

export const createPromptStore = ({ db }: SqliteContext): PromptStore => ({
  async pushVersion(input) {
    return withConstraintErrors("prompt", () =>
      db.transaction(
        (tx) => {
          let prompt = tx
            .select()
            .from(prompts)
            .where(and(eq(prompts.tenantId, input.tenantId), eq(prompts.slug, input.slug)))
            .get();
          if (!prompt) {
            prompt = {
              id: input.newPromptId,
              tenantId: input.tenantId,
              slug: input.slug,
              latestVersion: 0,
              createdAt: input.at,
              updatedAt: input.at,
            };
            tx.insert(prompts).values(prompt).run();
          }
          const newest =
            prompt.latestVersion > 0 ? resolve(tx, input.tenantId, input.slug, { kind: "latest" }) : null;
          let version: PromptVersionRecord;
          let created: boolean;
          if (newest && newest.contentHash === input.contentHash) {
            version = newest;
            created = false;
          } else {
            version = {
              id: input.newVersionId,
              promptId: prompt.id,
              tenantId: input.tenantId,
              slug: input.slug,
              version: prompt.latestVersion + 1,
              definition: input.definition,
              contentHash: input.contentHash,
              createdAt: input.at,
            };
            const { slug: _slug, ...row } = version;
            tx.insert(promptVersions).values(row).run();
            tx.update(prompts)
              .set({ latestVersion: version.version, updatedAt: input.at })
              .where(eq(prompts.id, prompt.id))
              .run();
            created = true;
          }
          for (const tag of new Set(input.tags)) pointTag(tx, version, tag, input.at);
          return { version, created, tags: tagsOfVersion(tx, version.id) };
        },
        { behavior: "immediate" },
      ),
    );
  },

  async setTag(tenantId, slug, selector, tag, at) {
    return db.transaction(
      (tx) => {
        const version = resolve(tx, tenantId, slug, selector);
        if (version) pointTag(tx, version, tag, at);
        return version;
      },
      { behavior: "immediate" },
    );
  },

  async resolveVersion(tenantId, slug, selector) {
    return resolve(db, tenantId, slug, selector);
  },

  async getPrompt(tenantId, slug) {
    const prompt = db
      .select()
      .from(prompts)
      .where(and(eq(prompts.tenantId, tenantId), eq(prompts.slug, slug)))
      .get();
    if (!prompt) return null;
    return { ...prompt, tags: tagMaps(db, [prompt.id]).get(prompt.id) ?? {} };
  },

  async listPrompts(tenantId, page) {
    const after = page.cursor ? decodeCursor(page.cursor, ["string"])[0] : null;
    const rows = db
      .select()
      .from(prompts)
      .where(and(eq(prompts.tenantId, tenantId), after === null ? undefined : gt(prompts.slug, after)))
      .orderBy(asc(prompts.slug))
      .limit(page.limit + 1)
      .all();
    const result = pageFrom(rows, page.limit, (row) => [row.slug]);
    const tags = tagMaps(
      db,
      result.items.map((row) => row.id),
    );
    const items: PromptRecord[] = result.items.map((row) => ({ ...row, tags: tags.get(row.id) ?? {} }));
    return { items, nextCursor: result.nextCursor };
  },

  async listVersions(tenantId, slug, page) {
    const before = page.cursor ? decodeCursor(page.cursor, ["number"])[0] : null;
    const rows = db
      .select(versionColumns)
      .from(promptVersions)
      .innerJoin(prompts, eq(prompts.id, promptVersions.promptId))
      .where(
        and(
          eq(prompts.tenantId, tenantId),
          eq(prompts.slug, slug),
          before === null ? undefined : lt(promptVersions.version, before),
        ),
      )
      .orderBy(desc(promptVersions.version))
      .limit(page.limit + 1)
      .all();
    return pageFrom(rows, page.limit, (row) => [row.version]);
  },

  async tagsOf(versionId) {
    return tagsOfVersion(db, versionId);
  },
});
