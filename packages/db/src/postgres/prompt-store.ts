import type {
  PromptRecord,
  PromptStore,
  PromptVersionRecord,
  TagMoveInput,
  TagMoveOutcome,
  VersionSelector,
} from "@promptrun/core";
import { and, asc, desc, eq, getTableColumns, inArray, sql } from "drizzle-orm";
import { prompts, promptTagHistory, promptTags, promptVersions } from "../schema/postgres.ts";
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
import type { PostgresContext, PostgresQueryable } from "./postgres-context.ts";
import { withConstraintErrors } from "./postgres-errors.ts";
import { createReadCache } from "./read-cache.ts";
import { insertDeliveries } from "./run-store.ts";

/** Resolved versions remembered at once. */
const MAX_CACHED_VERSIONS = 10_000;

/** Frozen all the way down: one cached record is shared by every caller. */
const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
};

const selectorKey = (selector: VersionSelector): string => {
  switch (selector.kind) {
    case "latest":
      return "latest";
    case "number":
      return `number\u0000${selector.version}`;
    case "id":
      return `id\u0000${selector.id}`;
    case "tag":
      return `tag\u0000${selector.tag}`;
  }
};

const versionColumns = promptVersionColumns(promptVersions, prompts);

/** The latest version's description, read from its JSON definition. */
const latestDescription = sql<string | null>`${promptVersions.definition} ->> 'description'`;

/** A prompt row with its latest version's description (prompt_versions joined by `latestVersionJoin`). */
const promptRowColumns = { ...getTableColumns(prompts), description: latestDescription };

const latestVersionJoin = and(
  eq(promptVersions.promptId, prompts.id),
  eq(promptVersions.version, prompts.latestVersion),
);

const selectorCondition = (selector: VersionSelector) =>
  versionSelectorCondition({ prompts, promptVersions, promptTags }, selector);

/** Always scoped by tenant AND slug: an id of another prompt or tenant resolves to nothing. */
const resolve = async (
  query: PostgresQueryable,
  tenantId: string,
  slug: string,
  selector: VersionSelector,
): Promise<PromptVersionRecord | null> => {
  const scope = and(eq(prompts.tenantId, tenantId), eq(prompts.slug, slug), selectorCondition(selector));
  const base = query
    .select(versionColumns)
    .from(promptVersions)
    .innerJoin(prompts, eq(prompts.id, promptVersions.promptId));
  const [row] =
    selector.kind === "tag"
      ? await base
          .innerJoin(
            promptTags,
            and(eq(promptTags.promptId, prompts.id), eq(promptTags.versionId, promptVersions.id)),
          )
          .where(scope)
      : await base.where(scope);
  return row ?? null;
};

const tagsOfVersion = async (query: PostgresQueryable, versionId: string): Promise<string[]> => {
  const rows = await query
    .select({ tag: promptTags.tag })
    .from(promptTags)
    .where(eq(promptTags.versionId, versionId))
    .orderBy(asc(promptTags.tag));
  return rows.map((row) => row.tag);
};

/** The version number a prompt's tag points at, or null when the tag does not exist. */
const currentTagVersion = async (
  query: PostgresQueryable,
  promptId: string,
  tag: string,
): Promise<number | null> => {
  const [row] = await query
    .select({ version: promptVersions.version })
    .from(promptTags)
    .innerJoin(promptVersions, eq(promptVersions.id, promptTags.versionId))
    .where(and(eq(promptTags.promptId, promptId), eq(promptTags.tag, tag)));
  return row?.version ?? null;
};

/** Records a move of a tag in the move's transaction (docs/PRODUCT-RULES.md "Prompts over REST", tag history). */
const recordMove = async (
  query: PostgresQueryable,
  target: { tenantId: string; promptId: string },
  move: { tag: string; version: number | null; previousVersion: number | null; at: Date; movedBy: string },
): Promise<void> => {
  await query.insert(promptTagHistory).values({
    id: Bun.randomUUIDv7(),
    tenantId: target.tenantId,
    promptId: target.promptId,
    tag: move.tag,
    version: move.version,
    previousVersion: move.previousVersion,
    movedAt: move.at,
    movedBy: move.movedBy,
  });
};

/** Points a tag at a version; a change of version is recorded in the tag history. */
const pointTag = async (
  query: PostgresQueryable,
  version: PromptVersionRecord,
  tag: string,
  at: Date,
  movedBy: string,
): Promise<void> => {
  const previousVersion = await currentTagVersion(query, version.promptId, tag);
  await query
    .insert(promptTags)
    .values({ promptId: version.promptId, tag, versionId: version.id, updatedAt: at })
    .onConflictDoUpdate({
      target: [promptTags.promptId, promptTags.tag],
      set: { versionId: version.id, updatedAt: at },
    });
  await query.update(prompts).set({ updatedAt: at }).where(eq(prompts.id, version.promptId));
  if (previousVersion !== version.version)
    await recordMove(query, version, { tag, version: version.version, previousVersion, at, movedBy });
};

/** Locks the prompt row so concurrent guarded moves of its tags serialize. */
const lockPrompt = async (query: PostgresQueryable, tenantId: string, slug: string) => {
  const [row] = await query
    .select({ id: prompts.id })
    .from(prompts)
    .where(and(eq(prompts.tenantId, tenantId), eq(prompts.slug, slug)))
    .for("update");
  return row ?? null;
};

/** Compare-and-set under the prompt's row lock (docs/PRODUCT-RULES.md "Prompts over REST"). */
const moveTagIn = async (query: PostgresQueryable, input: TagMoveInput): Promise<TagMoveOutcome> => {
  if (!(await lockPrompt(query, input.tenantId, input.slug))) return { outcome: "missing" };
  const version = await resolve(query, input.tenantId, input.slug, {
    kind: "number",
    version: input.version,
  });
  if (!version) return { outcome: "missing" };
  const current = await currentTagVersion(query, version.promptId, input.tag);
  if (input.expectedVersion !== undefined && input.expectedVersion !== current)
    return { outcome: "conflict", current };
  await pointTag(query, version, input.tag, input.at, input.movedBy);
  return { outcome: "moved", version, previousVersion: current };
};

/** tag → version number, for each of the given prompts. */
const tagMaps = async (
  query: PostgresQueryable,
  promptIds: string[],
): Promise<Map<string, Record<string, number>>> => {
  if (promptIds.length === 0) return new Map();
  const rows = await query
    .select({ promptId: promptTags.promptId, tag: promptTags.tag, version: promptVersions.version })
    .from(promptTags)
    .innerJoin(promptVersions, eq(promptVersions.id, promptTags.versionId))
    .where(inArray(promptTags.promptId, promptIds))
    .orderBy(asc(promptTags.tag));
  return tagMapsFrom(rows);
};

/**
 * Version resolution runs on every create-run (and again when the run executes): resolved
 * versions are remembered per (tenant, slug, selector). A number or an id never changes meaning
 * (versions are never deleted), so those stay until evicted by size; `latest` and tags move, so
 * they expire after the TTL, and every push or tag move announces itself (ChangeFeed): this
 * process forgets at once, other instances when the NOTIFY arrives.
 */
export const createPromptStore = ({ db, changes, cacheTtlMs }: PostgresContext): PromptStore => {
  const resolved = createReadCache<PromptVersionRecord>({
    maxEntries: MAX_CACHED_VERSIONS,
    ttlMs: cacheTtlMs,
  });
  changes.register(() => resolved.clear());

  return {
    async pushVersion(input) {
      const pushed = await withConstraintErrors("prompt", () =>
        db.transaction(async (tx) => {
          await tx
            .insert(prompts)
            .values({
              id: input.newPromptId,
              tenantId: input.tenantId,
              slug: input.slug,
              latestVersion: 0,
              createdAt: input.at,
              updatedAt: input.at,
            })
            .onConflictDoNothing({ target: [prompts.tenantId, prompts.slug] });
          // The row lock serializes concurrent pushes of one slug, across instances too: the next
          // push reads the version this one commits.
          const [prompt] = await tx
            .select()
            .from(prompts)
            .where(and(eq(prompts.tenantId, input.tenantId), eq(prompts.slug, input.slug)))
            .for("update");
          if (!prompt) throw new Error(`prompt ${input.slug} vanished inside its transaction`);
          const newest =
            prompt.latestVersion > 0
              ? await resolve(tx, input.tenantId, input.slug, { kind: "latest" })
              : null;
          const { version, created } = pushedVersion(input, prompt, newest);
          if (created) {
            const { slug: _slug, ...row } = version;
            await tx.insert(promptVersions).values(row);
            await tx
              .update(prompts)
              .set({ latestVersion: version.version, updatedAt: input.at })
              .where(eq(prompts.id, prompt.id));
          }
          for (const tag of new Set(input.tags))
            await pointTag(tx, version, tag, input.at, input.movedBy ?? "cli");
          await insertDeliveries(tx, input.outbox?.({ version, created }) ?? []);
          return { version, created, tags: await tagsOfVersion(tx, version.id) };
        }),
      );
      await changes.announce();
      return pushed;
    },

    async setTag(tenantId, slug, selector, tag, at, movedBy = "cli", outbox = undefined) {
      const version = await withConstraintErrors("webhook delivery", () =>
        db.transaction(async (tx) => {
          const found = await resolve(tx, tenantId, slug, selector);
          if (found) {
            await pointTag(tx, found, tag, at, movedBy);
            await insertDeliveries(tx, outbox?.(found) ?? []);
          }
          return found;
        }),
      );
      if (version) await changes.announce();
      return version;
    },

    async moveTag(input) {
      const moved = await withConstraintErrors("webhook delivery", () =>
        db.transaction(async (tx) => {
          const outcome = await moveTagIn(tx, input);
          if (outcome.outcome === "moved") await insertDeliveries(tx, input.outbox?.(outcome) ?? []);
          return outcome;
        }),
      );
      if (moved.outcome === "moved") await changes.announce();
      return moved;
    },

    async deleteTag(tenantId, slug, tag, at, movedBy) {
      const removed = await db.transaction(async (tx) => {
        const prompt = await lockPrompt(tx, tenantId, slug);
        const current = prompt ? await currentTagVersion(tx, prompt.id, tag) : null;
        if (!prompt || current === null) return null;
        await tx.delete(promptTags).where(and(eq(promptTags.promptId, prompt.id), eq(promptTags.tag, tag)));
        await tx.update(prompts).set({ updatedAt: at }).where(eq(prompts.id, prompt.id));
        await recordMove(
          tx,
          { tenantId, promptId: prompt.id },
          { tag, version: null, previousVersion: current, at, movedBy },
        );
        return current;
      });
      if (removed !== null) await changes.announce();
      return removed;
    },

    async resolveVersion(tenantId, slug, selector) {
      return resolved.get(
        `${tenantId}\u0000${slug}\u0000${selectorKey(selector)}`,
        async () => {
          const version = await resolve(db, tenantId, slug, selector);
          return version === null ? null : deepFreeze(version);
        },
        { immutable: selector.kind === "number" || selector.kind === "id" },
      );
    },

    async getPrompt(tenantId, slug) {
      const [prompt] = await db
        .select(promptRowColumns)
        .from(prompts)
        .leftJoin(promptVersions, latestVersionJoin)
        .where(and(eq(prompts.tenantId, tenantId), eq(prompts.slug, slug)));
      if (!prompt) return null;
      return { ...prompt, tags: (await tagMaps(db, [prompt.id])).get(prompt.id) ?? {} };
    },

    async listPrompts(tenantId, page) {
      const rows = await db
        .select(promptRowColumns)
        .from(prompts)
        .leftJoin(promptVersions, latestVersionJoin)
        .where(promptListCondition({ prompts, promptTags }, tenantId, page, latestDescription))
        .orderBy(asc(prompts.slug))
        .limit(page.limit + 1);
      const result = pageFrom(rows, page.limit, (row) => [row.slug]);
      const tags = await tagMaps(
        db,
        result.items.map((row) => row.id),
      );
      const items: PromptRecord[] = result.items.map((row) => ({ ...row, tags: tags.get(row.id) ?? {} }));
      return { items, nextCursor: result.nextCursor };
    },

    async listVersions(tenantId, slug, page) {
      const rows = await db
        .select(versionColumns)
        .from(promptVersions)
        .innerJoin(prompts, eq(prompts.id, promptVersions.promptId))
        .where(versionListCondition({ prompts, promptVersions }, tenantId, slug, page.cursor))
        .orderBy(desc(promptVersions.version))
        .limit(page.limit + 1);
      return pageFrom(rows, page.limit, (row) => [row.version]);
    },

    async listTagHistory(tenantId, slug, tag, page) {
      const rows = await db
        .select(historyColumns(promptTagHistory))
        .from(promptTagHistory)
        .innerJoin(prompts, eq(prompts.id, promptTagHistory.promptId))
        .where(historyCondition({ prompts, promptTagHistory }, tenantId, slug, tag, page.cursor))
        .orderBy(desc(promptTagHistory.movedAt), desc(promptTagHistory.id))
        .limit(page.limit + 1);
      return historyPage(rows, page.limit);
    },

    async tagsOf(versionId) {
      return tagsOfVersion(db, versionId);
    },

    async countVersions(tenantId) {
      // Versions are numbered 1…latest per prompt and never deleted: the sum is the count.
      const [row] = await db
        .select({ total: sql<number>`coalesce(sum(${prompts.latestVersion}), 0)`.mapWith(Number) })
        .from(prompts)
        .where(eq(prompts.tenantId, tenantId));
      return row?.total ?? 0;
    },
  };
};
