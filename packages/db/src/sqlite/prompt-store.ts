import type {
  PromptRecord,
  PromptStore,
  PromptVersionRecord,
  TagMoveInput,
  TagMoveOutcome,
  VersionSelector,
} from "@promptrun/core";
import { and, asc, desc, eq, getTableColumns, inArray, sql } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { prompts, promptTagHistory, promptTags, promptVersions } from "../schema/sqlite.ts";
import { pageFrom } from "../shared/cursor.ts";
import {
  promptListCondition,
  promptVersionColumns,
  pushedVersion,
  tagMapsFrom,
  versionListCondition,
  versionSelectorCondition,
} from "../shared/prompt-columns.ts";
import { historyColumns, historyCondition, historyPage } from "../shared/tag-history.ts";
import { insertDeliveries } from "./run-store.ts";
import type { SqliteContext } from "./sqlite-context.ts";
import { withConstraintErrors } from "./sqlite-errors.ts";

/** A connection or an open transaction: both offer the same synchronous query builder. */
type Queryable = Pick<BunSQLiteDatabase, "select" | "insert" | "update" | "delete">;

const versionColumns = promptVersionColumns(promptVersions, prompts);

/** The latest version's description, read from its JSON definition. */
const latestDescription = sql<string | null>`json_extract(${promptVersions.definition}, '$.description')`;

/** A prompt row with its latest version's description (prompt_versions joined by `latestVersionJoin`). */
const promptRowColumns = { ...getTableColumns(prompts), description: latestDescription };

const latestVersionJoin = and(
  eq(promptVersions.promptId, prompts.id),
  eq(promptVersions.version, prompts.latestVersion),
);

const selectorCondition = (selector: VersionSelector) =>
  versionSelectorCondition({ prompts, promptVersions, promptTags }, selector);

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

/** The version number a prompt's tag points at, or null when the tag does not exist. */
const currentTagVersion = (query: Queryable, promptId: string, tag: string): number | null =>
  query
    .select({ version: promptVersions.version })
    .from(promptTags)
    .innerJoin(promptVersions, eq(promptVersions.id, promptTags.versionId))
    .where(and(eq(promptTags.promptId, promptId), eq(promptTags.tag, tag)))
    .get()?.version ?? null;

/** Records a move of a tag in the move's transaction (docs/PRODUCT-RULES.md "Prompts over REST", tag history). */
const recordMove = (
  query: Queryable,
  target: { tenantId: string; promptId: string },
  move: { tag: string; version: number | null; previousVersion: number | null; at: Date; movedBy: string },
): void => {
  query
    .insert(promptTagHistory)
    .values({
      id: Bun.randomUUIDv7(),
      tenantId: target.tenantId,
      promptId: target.promptId,
      tag: move.tag,
      version: move.version,
      previousVersion: move.previousVersion,
      movedAt: move.at,
      movedBy: move.movedBy,
    })
    .run();
};

/** Points a tag at a version; a change of version is recorded in the tag history. */
const pointTag = (
  query: Queryable,
  version: PromptVersionRecord,
  tag: string,
  at: Date,
  movedBy: string,
): void => {
  const previousVersion = currentTagVersion(query, version.promptId, tag);
  query
    .insert(promptTags)
    .values({ promptId: version.promptId, tag, versionId: version.id, updatedAt: at })
    .onConflictDoUpdate({
      target: [promptTags.promptId, promptTags.tag],
      set: { versionId: version.id, updatedAt: at },
    })
    .run();
  query.update(prompts).set({ updatedAt: at }).where(eq(prompts.id, version.promptId)).run();
  if (previousVersion !== version.version)
    recordMove(query, version, { tag, version: version.version, previousVersion, at, movedBy });
};

/** Compare-and-set inside an immediate transaction (docs/PRODUCT-RULES.md "Prompts over REST"). */
const moveTagIn = (query: Queryable, input: TagMoveInput): TagMoveOutcome => {
  const version = resolve(query, input.tenantId, input.slug, { kind: "number", version: input.version });
  if (!version) return { outcome: "missing" };
  const current = currentTagVersion(query, version.promptId, input.tag);
  if (input.expectedVersion !== undefined && input.expectedVersion !== current)
    return { outcome: "conflict", current };
  pointTag(query, version, input.tag, input.at, input.movedBy);
  return { outcome: "moved", version, previousVersion: current };
};

/** tag → version number, for each of the given prompts. */
const tagMaps = (query: Queryable, promptIds: string[]): Map<string, Record<string, number>> => {
  if (promptIds.length === 0) return new Map();
  const rows = query
    .select({ promptId: promptTags.promptId, tag: promptTags.tag, version: promptVersions.version })
    .from(promptTags)
    .innerJoin(promptVersions, eq(promptVersions.id, promptTags.versionId))
    .where(inArray(promptTags.promptId, promptIds))
    .orderBy(asc(promptTags.tag))
    .all();
  return tagMapsFrom(rows);
};

/** Resolved versions remembered at once; beyond it the oldest entry goes. */
const MAX_CACHED_VERSIONS = 10_000;

interface VersionRow {
  id: string;
  prompt_id: string;
  tenant_id: string;
  slug: string;
  version: number;
  definition: string;
  content_hash: string;
  created_at: number;
}

const VERSION_SELECT = `SELECT v.id, v.prompt_id, v.tenant_id, p.slug, v.version, v.definition, v.content_hash, v.created_at
  FROM prompt_versions v JOIN prompts p ON p.id = v.prompt_id`;
const IN_PROMPT = "p.tenant_id = $tenantId AND p.slug = $slug";

/** Frozen all the way down: one cached record is shared by every caller. */
const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
};

const toVersionRecord = (row: VersionRow): PromptVersionRecord =>
  deepFreeze({
    id: row.id,
    promptId: row.prompt_id,
    tenantId: row.tenant_id,
    slug: row.slug,
    version: row.version,
    definition: JSON.parse(row.definition) as PromptVersionRecord["definition"],
    contentHash: row.content_hash,
    createdAt: new Date(row.created_at),
  });

type ResolveParams = Record<string, string | number>;

/**
 * Version resolution runs on every create-run (and again when the run executes): one prepared
 * statement per selector kind, and resolved versions are remembered per (tenant, slug,
 * selector). Numbers and ids never change meaning; `latest` and tags do, so this store's own
 * pushes and tag moves clear the memory, and `PRAGMA data_version` (changed by any commit of
 * ANOTHER connection, e.g. `promptrun prompts push` from the CLI) clears it before the next lookup.
 */
export const createPromptStore = ({ db, raw, dataVersion }: SqliteContext): PromptStore => {
  const resolveStatements: Record<
    VersionSelector["kind"],
    ReturnType<typeof raw.prepare<VersionRow, ResolveParams>>
  > = {
    id: raw.prepare(`${VERSION_SELECT} WHERE ${IN_PROMPT} AND v.id = $value`),
    number: raw.prepare(`${VERSION_SELECT} WHERE ${IN_PROMPT} AND v.version = $value`),
    latest: raw.prepare(`${VERSION_SELECT} WHERE ${IN_PROMPT} AND v.version = p.latest_version`),
    tag: raw.prepare(
      `${VERSION_SELECT} JOIN prompt_tags g ON g.prompt_id = p.id AND g.version_id = v.id WHERE ${IN_PROMPT} AND g.tag = $value`,
    ),
  };
  const resolved = new Map<string, PromptVersionRecord>();
  let seenDataVersion = -1;

  const selectorValue = (selector: VersionSelector): string | number => {
    switch (selector.kind) {
      case "id":
        return selector.id;
      case "number":
        return selector.version;
      case "latest":
        return "";
      case "tag":
        return selector.tag;
    }
  };

  const resolveCached = (tenantId: string, slug: string, selector: VersionSelector) => {
    const current = dataVersion();
    if (current !== seenDataVersion) {
      seenDataVersion = current;
      resolved.clear();
    }
    const value = selectorValue(selector);
    const cacheKey = `${tenantId}\u0000${slug}\u0000${selector.kind}\u0000${value}`;
    const hit = resolved.get(cacheKey);
    if (hit !== undefined) return hit;
    const params: ResolveParams = selector.kind === "latest" ? { tenantId, slug } : { tenantId, slug, value };
    const row = resolveStatements[selector.kind].get(params);
    if (row === null) return null;
    const version = toVersionRecord(row);
    if (resolved.size >= MAX_CACHED_VERSIONS) {
      const oldest = resolved.keys().next().value;
      if (oldest !== undefined) resolved.delete(oldest);
    }
    resolved.set(cacheKey, version);
    return version;
  };

  return {
    async pushVersion(input) {
      resolved.clear();
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
            const { version, created } = pushedVersion(input, prompt, newest);
            if (created) {
              const { slug: _slug, ...row } = version;
              tx.insert(promptVersions).values(row).run();
              tx.update(prompts)
                .set({ latestVersion: version.version, updatedAt: input.at })
                .where(eq(prompts.id, prompt.id))
                .run();
            }
            for (const tag of new Set(input.tags))
              pointTag(tx, version, tag, input.at, input.movedBy ?? "cli");
            insertDeliveries(tx, input.outbox?.({ version, created }) ?? []);
            return { version, created, tags: tagsOfVersion(tx, version.id) };
          },
          { behavior: "immediate" },
        ),
      );
    },

    async setTag(tenantId, slug, selector, tag, at, movedBy = "cli", outbox = undefined) {
      resolved.clear();
      return withConstraintErrors("webhook delivery", () =>
        db.transaction(
          (tx) => {
            const version = resolve(tx, tenantId, slug, selector);
            if (version) {
              pointTag(tx, version, tag, at, movedBy);
              insertDeliveries(tx, outbox?.(version) ?? []);
            }
            return version;
          },
          { behavior: "immediate" },
        ),
      );
    },

    async moveTag(input) {
      resolved.clear();
      return withConstraintErrors("webhook delivery", () =>
        db.transaction(
          (tx) => {
            const moved = moveTagIn(tx, input);
            if (moved.outcome === "moved") insertDeliveries(tx, input.outbox?.(moved) ?? []);
            return moved;
          },
          { behavior: "immediate" },
        ),
      );
    },

    async deleteTag(tenantId, slug, tag, at, movedBy) {
      resolved.clear();
      return db.transaction(
        (tx) => {
          const prompt = tx
            .select({ id: prompts.id })
            .from(prompts)
            .where(and(eq(prompts.tenantId, tenantId), eq(prompts.slug, slug)))
            .get();
          const current = prompt ? currentTagVersion(tx, prompt.id, tag) : null;
          if (!prompt || current === null) return null;
          tx.delete(promptTags)
            .where(and(eq(promptTags.promptId, prompt.id), eq(promptTags.tag, tag)))
            .run();
          tx.update(prompts).set({ updatedAt: at }).where(eq(prompts.id, prompt.id)).run();
          recordMove(
            tx,
            { tenantId, promptId: prompt.id },
            { tag, version: null, previousVersion: current, at, movedBy },
          );
          return current;
        },
        { behavior: "immediate" },
      );
    },

    async resolveVersion(tenantId, slug, selector) {
      return resolveCached(tenantId, slug, selector);
    },

    async getPrompt(tenantId, slug) {
      const prompt = db
        .select(promptRowColumns)
        .from(prompts)
        .leftJoin(promptVersions, latestVersionJoin)
        .where(and(eq(prompts.tenantId, tenantId), eq(prompts.slug, slug)))
        .get();
      if (!prompt) return null;
      return { ...prompt, tags: tagMaps(db, [prompt.id]).get(prompt.id) ?? {} };
    },

    async listPrompts(tenantId, page) {
      const rows = db
        .select(promptRowColumns)
        .from(prompts)
        .leftJoin(promptVersions, latestVersionJoin)
        .where(promptListCondition({ prompts, promptTags }, tenantId, page, latestDescription))
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
      const rows = db
        .select(versionColumns)
        .from(promptVersions)
        .innerJoin(prompts, eq(prompts.id, promptVersions.promptId))
        .where(versionListCondition({ prompts, promptVersions }, tenantId, slug, page.cursor))
        .orderBy(desc(promptVersions.version))
        .limit(page.limit + 1)
        .all();
      return pageFrom(rows, page.limit, (row) => [row.version]);
    },

    async listTagHistory(tenantId, slug, tag, page) {
      const rows = db
        .select(historyColumns(promptTagHistory))
        .from(promptTagHistory)
        .innerJoin(prompts, eq(prompts.id, promptTagHistory.promptId))
        .where(historyCondition({ prompts, promptTagHistory }, tenantId, slug, tag, page.cursor))
        .orderBy(desc(promptTagHistory.movedAt), desc(promptTagHistory.id))
        .limit(page.limit + 1)
        .all();
      return historyPage(rows, page.limit);
    },

    async tagsOf(versionId) {
      return tagsOfVersion(db, versionId);
    },

    async countVersions(tenantId) {
      // Versions are numbered 1…latest per prompt and never deleted: the sum is the count.
      const row = db
        .select({ total: sql<number>`coalesce(sum(${prompts.latestVersion}), 0)`.mapWith(Number) })
        .from(prompts)
        .where(eq(prompts.tenantId, tenantId))
        .get();
      return row?.total ?? 0;
    },
  };
};
