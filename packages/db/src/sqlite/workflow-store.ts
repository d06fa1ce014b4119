import type { VersionSelector, WorkflowStore, WorkflowVersionRecord } from "@promptrun/core";
import { and, asc, desc, eq, getTableColumns, gte, inArray, ne, sql } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import {
  runs,
  threads,
  workflowIdempotencyKeys,
  workflowRuns,
  workflows,
  workflowTags,
  workflowVersions,
} from "../schema/sqlite.ts";
import { pageFrom } from "../shared/cursor.ts";
import {
  landedVersion,
  selectedVersionCondition,
  slugPageCondition,
  tagMapsOf,
  versionPageCondition,
} from "../shared/definition-versions.ts";
import {
  advancedRunChanges,
  idempotencyConflict,
  idempotencyTakeover,
  NEW_WORKFLOW_RUN_STATE,
  toStoredSteps,
  toWorkflowRunRecord,
  workflowRunListCondition,
  workflowRunPage,
  workflowVersionColumns,
} from "../shared/workflow-records.ts";
import type { GroupCommit } from "./group-commit.ts";
import { insertDeliveries, prepareRunInsert } from "./run-store.ts";
import type { SqliteContext } from "./sqlite-context.ts";
import { withConstraintErrors } from "./sqlite-errors.ts";

/** A connection or an open transaction: both offer the same synchronous query builder. */
type Queryable = Pick<BunSQLiteDatabase, "select" | "insert" | "update" | "delete">;

/** As the run store's engine writes: an advance must not be lost to a locked database or a full disk. */
const ENGINE_WRITE = { maxBusyWaitMs: 300_000, retryWhenStorageFull: true };

const versionColumns = workflowVersionColumns(workflowVersions, workflows);

/** The latest version's description, read from its JSON definition. */
const latestDescription = sql<string | null>`json_extract(${workflowVersions.definition}, '$.description')`;

const workflowRowColumns = { ...getTableColumns(workflows), description: latestDescription };

const latestVersionJoin = and(
  eq(workflowVersions.workflowId, workflows.id),
  eq(workflowVersions.version, workflows.latestVersion),
);

const runColumns = getTableColumns(workflowRuns);

/** A literal, not a parameter, so the partial index (`WHERE status = 'pending'`) applies. */
const isPending = sql`${workflowRuns.status} = 'pending'`;

/** Always scoped by tenant AND slug: an id of another workflow or tenant resolves to nothing. */
const resolve = (
  query: Queryable,
  tenantId: string,
  slug: string,
  selector: VersionSelector,
): WorkflowVersionRecord | null => {
  const scope = and(
    eq(workflows.tenantId, tenantId),
    eq(workflows.slug, slug),
    selectedVersionCondition({ owners: workflows, versions: workflowVersions, tags: workflowTags }, selector),
  );
  const base = query
    .select(versionColumns)
    .from(workflowVersions)
    .innerJoin(workflows, eq(workflows.id, workflowVersions.workflowId));
  const row =
    selector.kind === "tag"
      ? base
          .innerJoin(
            workflowTags,
            and(eq(workflowTags.workflowId, workflows.id), eq(workflowTags.versionId, workflowVersions.id)),
          )
          .where(scope)
          .get()
      : base.where(scope).get();
  return row ?? null;
};

const tagsOfVersion = (query: Queryable, versionId: string): string[] =>
  query
    .select({ tag: workflowTags.tag })
    .from(workflowTags)
    .where(eq(workflowTags.versionId, versionId))
    .orderBy(asc(workflowTags.tag))
    .all()
    .map((row) => row.tag);

const pointTag = (query: Queryable, version: WorkflowVersionRecord, tag: string, at: Date): void => {
  query
    .insert(workflowTags)
    .values({ workflowId: version.workflowId, tag, versionId: version.id, updatedAt: at })
    .onConflictDoUpdate({
      target: [workflowTags.workflowId, workflowTags.tag],
      set: { versionId: version.id, updatedAt: at },
    })
    .run();
  query.update(workflows).set({ updatedAt: at }).where(eq(workflows.id, version.workflowId)).run();
};

/** tag → version number, for each of the given workflows. */
const tagMaps = (query: Queryable, workflowIds: string[]): Map<string, Record<string, number>> => {
  if (workflowIds.length === 0) return new Map();
  const rows = query
    .select({ ownerId: workflowTags.workflowId, tag: workflowTags.tag, version: workflowVersions.version })
    .from(workflowTags)
    .innerJoin(workflowVersions, eq(workflowVersions.id, workflowTags.versionId))
    .where(inArray(workflowTags.workflowId, workflowIds))
    .orderBy(asc(workflowTags.tag))
    .all();
  return tagMapsOf(rows);
};

type PushInput = Parameters<WorkflowStore["pushVersion"]>[0];

const pushIn = (tx: Queryable, input: PushInput) => {
  let workflow = tx
    .select()
    .from(workflows)
    .where(and(eq(workflows.tenantId, input.tenantId), eq(workflows.slug, input.slug)))
    .get();
  if (!workflow) {
    workflow = {
      id: input.newWorkflowId,
      tenantId: input.tenantId,
      slug: input.slug,
      latestVersion: 0,
      createdAt: input.at,
      updatedAt: input.at,
    };
    tx.insert(workflows).values(workflow).run();
  }
  const newest =
    workflow.latestVersion > 0 ? resolve(tx, input.tenantId, input.slug, { kind: "latest" }) : null;
  const workflowId = workflow.id;
  const { version, created } = landedVersion(input.contentHash, workflow.latestVersion, newest, (number) => ({
    id: input.newVersionId,
    workflowId,
    tenantId: input.tenantId,
    slug: input.slug,
    version: number,
    definition: input.definition,
    contentHash: input.contentHash,
    createdAt: input.at,
  }));
  if (created) {
    const { slug: _slug, ...row } = version;
    tx.insert(workflowVersions).values(row).run();
    tx.update(workflows)
      .set({ latestVersion: version.version, updatedAt: input.at })
      .where(eq(workflows.id, workflowId))
      .run();
  }
  for (const tag of new Set(input.tags)) pointTag(tx, version, tag, input.at);
  return { version, created, tags: tagsOfVersion(tx, version.id) };
};

/** Workflow definitions: versioned and tagged as prompts are (docs/WORKFLOWS.md "Storage"). */
const definitionStore = ({ db }: SqliteContext) => ({
  async pushVersion(input: PushInput) {
    return withConstraintErrors("workflow", () =>
      db.transaction((tx) => pushIn(tx, input), { behavior: "immediate" }),
    );
  },

  async setTag(tenantId: string, slug: string, version: number, tag: string, at: Date) {
    return db.transaction(
      (tx) => {
        const found = resolve(tx, tenantId, slug, { kind: "number", version });
        if (found) pointTag(tx, found, tag, at);
        return found;
      },
      { behavior: "immediate" },
    );
  },

  async resolveVersion(tenantId: string, slug: string, selector: VersionSelector) {
    return resolve(db, tenantId, slug, selector);
  },

  async tagsOf(versionId: string) {
    return tagsOfVersion(db, versionId);
  },

  async getWorkflow(tenantId: string, slug: string) {
    const workflow = db
      .select(workflowRowColumns)
      .from(workflows)
      .leftJoin(workflowVersions, latestVersionJoin)
      .where(and(eq(workflows.tenantId, tenantId), eq(workflows.slug, slug)))
      .get();
    if (!workflow) return null;
    return { ...workflow, tags: tagMaps(db, [workflow.id]).get(workflow.id) ?? {} };
  },

  async listWorkflows(tenantId: string, page: { cursor?: string | null; limit: number }) {
    const rows = db
      .select(workflowRowColumns)
      .from(workflows)
      .leftJoin(workflowVersions, latestVersionJoin)
      .where(slugPageCondition(workflows, tenantId, page.cursor))
      .orderBy(asc(workflows.slug))
      .limit(page.limit + 1)
      .all();
    const result = pageFrom(rows, page.limit, (row) => [row.slug]);
    const tags = tagMaps(
      db,
      result.items.map((row) => row.id),
    );
    return {
      items: result.items.map((row) => ({ ...row, tags: tags.get(row.id) ?? {} })),
      nextCursor: result.nextCursor,
    };
  },

  async listVersions(tenantId: string, slug: string, page: { cursor?: string | null; limit: number }) {
    const rows = db
      .select(versionColumns)
      .from(workflowVersions)
      .innerJoin(workflows, eq(workflows.id, workflowVersions.workflowId))
      .where(
        versionPageCondition({ owners: workflows, versions: workflowVersions }, tenantId, slug, page.cursor),
      )
      .orderBy(desc(workflowVersions.version))
      .limit(page.limit + 1)
      .all();
    return pageFrom(rows, page.limit, (row) => [row.version]);
  },
});

/**
 * Workflow runs: creates and advances go through the run store's group commit (one transaction,
 * one fsync per event-loop turn), an advance inserting its step runs with the statement of a
 * create (docs/WORKFLOWS.md "Storage").
 */
const runStore = ({ db, raw }: SqliteContext, groupCommit: GroupCommit) => {
  const insertRun = prepareRunInsert(raw);
  return {
    createRun(
      run: Parameters<WorkflowStore["createRun"]>[0],
      idempotency?: Parameters<WorkflowStore["createRun"]>[1],
      options?: Parameters<WorkflowStore["createRun"]>[2],
    ) {
      return groupCommit.submit(() => {
        db.insert(threads)
          .values({ tenantId: run.tenantId, id: run.threadId, createdAt: run.createdAt })
          .onConflictDoNothing()
          .run();
        withConstraintErrors("workflow run", () =>
          db
            .insert(workflowRuns)
            .values({ ...run, ...NEW_WORKFLOW_RUN_STATE, steps: toStoredSteps(run.steps) })
            .run(),
        );
        if (!idempotency) return;
        const taken = db
          .insert(workflowIdempotencyKeys)
          .values(idempotency)
          .onConflictDoUpdate(
            idempotencyTakeover(workflowIdempotencyKeys, idempotency, options?.idempotencyExpiredBefore),
          )
          .returning({ runId: workflowIdempotencyKeys.runId })
          .get();
        // Thrown inside the group commit's savepoint: the run and its thread roll back with it.
        if (!taken) throw idempotencyConflict();
      });
    },

    async findIdempotency(tenantId: string, key: string, notBefore: Date) {
      return (
        db
          .select()
          .from(workflowIdempotencyKeys)
          .where(
            and(
              eq(workflowIdempotencyKeys.tenantId, tenantId),
              eq(workflowIdempotencyKeys.key, key),
              gte(workflowIdempotencyKeys.createdAt, notBefore),
            ),
          )
          .get() ?? null
      );
    },

    async getRun(tenantId: string, id: string) {
      const row = db
        .select(runColumns)
        .from(workflowRuns)
        .where(and(eq(workflowRuns.id, id), eq(workflowRuns.tenantId, tenantId)))
        .get();
      return row ? toWorkflowRunRecord(row) : null;
    },

    async getRunById(id: string) {
      const row = db.select(runColumns).from(workflowRuns).where(eq(workflowRuns.id, id)).get();
      return row ? toWorkflowRunRecord(row) : null;
    },

    async listRuns(
      tenantId: string,
      filter: Parameters<WorkflowStore["listRuns"]>[1],
      page: { cursor?: string | null; limit: number },
    ) {
      const rows = db
        .select(runColumns)
        .from(workflowRuns)
        .where(workflowRunListCondition(workflowRuns, tenantId, filter, page.cursor))
        .orderBy(desc(workflowRuns.createdAt), desc(workflowRuns.id))
        .limit(page.limit + 1)
        .all();
      return workflowRunPage(rows, page.limit);
    },

    async listPendingRunIds() {
      return db
        .select({ id: workflowRuns.id })
        .from(workflowRuns)
        .where(isPending)
        .orderBy(asc(workflowRuns.createdAt), asc(workflowRuns.id))
        .all()
        .map((row) => row.id);
    },

    advance(id: string, expectedRevision: number, change: Parameters<WorkflowStore["advance"]>[2]) {
      return groupCommit.submit(() => {
        const advanced = db
          .update(workflowRuns)
          .set({ ...advancedRunChanges(change), revision: sql`${workflowRuns.revision} + 1` })
          .where(and(eq(workflowRuns.id, id), eq(workflowRuns.revision, expectedRevision), isPending))
          .returning({ id: workflowRuns.id })
          .get();
        if (!advanced) return false;
        for (const run of change.newRuns) insertRun(run);
        withConstraintErrors("webhook delivery", () => insertDeliveries(db, change.end?.deliveries ?? []));
        return true;
      }, ENGINE_WRITE);
    },

    async listOrphanedStepRuns(limit: number) {
      return db
        .select({ id: runs.id })
        .from(runs)
        .innerJoin(workflowRuns, eq(workflowRuns.id, runs.workflowRunId))
        .where(and(sql`${runs.status} = 'pending'`, ne(workflowRuns.status, "pending")))
        .orderBy(asc(runs.createdAt), asc(runs.id))
        .limit(limit)
        .all()
        .map((row) => row.id);
    },
  };
};

export const createWorkflowStore = (context: SqliteContext, groupCommit: GroupCommit): WorkflowStore => ({
  ...definitionStore(context),
  ...runStore(context, groupCommit),
});
