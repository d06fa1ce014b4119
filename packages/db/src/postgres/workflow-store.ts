import type { VersionSelector, WorkflowStore, WorkflowVersionRecord } from "@promptrun/core";
import { and, asc, desc, eq, getTableColumns, gte, inArray, ne, sql } from "drizzle-orm";
import {
  runs,
  threads,
  workflowIdempotencyKeys,
  workflowRuns,
  workflows,
  workflowTags,
  workflowVersions,
} from "../schema/postgres.ts";
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
import { insertRunRows } from "./insert-runs.ts";
import type { PostgresContext, PostgresQueryable, PostgresTransaction } from "./postgres-context.ts";
import { withConstraintErrors } from "./postgres-errors.ts";
import { insertDeliveries } from "./run-store.ts";

const versionColumns = workflowVersionColumns(workflowVersions, workflows);

/** The latest version's description, read from its JSON definition. */
const latestDescription = sql<string | null>`${workflowVersions.definition} ->> 'description'`;

const workflowRowColumns = { ...getTableColumns(workflows), description: latestDescription };

const latestVersionJoin = and(
  eq(workflowVersions.workflowId, workflows.id),
  eq(workflowVersions.version, workflows.latestVersion),
);

const runColumns = getTableColumns(workflowRuns);

/** A literal, not a parameter, so the partial index (`WHERE status = 'pending'`) applies. */
const isPending = sql`${workflowRuns.status} = 'pending'`;

/** Always scoped by tenant AND slug: an id of another workflow or tenant resolves to nothing. */
const resolve = async (
  query: PostgresQueryable,
  tenantId: string,
  slug: string,
  selector: VersionSelector,
): Promise<WorkflowVersionRecord | null> => {
  const scope = and(
    eq(workflows.tenantId, tenantId),
    eq(workflows.slug, slug),
    selectedVersionCondition({ owners: workflows, versions: workflowVersions, tags: workflowTags }, selector),
  );
  const base = query
    .select(versionColumns)
    .from(workflowVersions)
    .innerJoin(workflows, eq(workflows.id, workflowVersions.workflowId));
  const [row] =
    selector.kind === "tag"
      ? await base
          .innerJoin(
            workflowTags,
            and(eq(workflowTags.workflowId, workflows.id), eq(workflowTags.versionId, workflowVersions.id)),
          )
          .where(scope)
      : await base.where(scope);
  return row ?? null;
};

const tagsOfVersion = async (query: PostgresQueryable, versionId: string): Promise<string[]> => {
  const rows = await query
    .select({ tag: workflowTags.tag })
    .from(workflowTags)
    .where(eq(workflowTags.versionId, versionId))
    .orderBy(asc(workflowTags.tag));
  return rows.map((row) => row.tag);
};

const pointTag = async (
  query: PostgresQueryable,
  version: WorkflowVersionRecord,
  tag: string,
  at: Date,
): Promise<void> => {
  await query
    .insert(workflowTags)
    .values({ workflowId: version.workflowId, tag, versionId: version.id, updatedAt: at })
    .onConflictDoUpdate({
      target: [workflowTags.workflowId, workflowTags.tag],
      set: { versionId: version.id, updatedAt: at },
    });
  await query.update(workflows).set({ updatedAt: at }).where(eq(workflows.id, version.workflowId));
};

/** tag → version number, for each of the given workflows. */
const tagMaps = async (
  query: PostgresQueryable,
  workflowIds: string[],
): Promise<Map<string, Record<string, number>>> => {
  if (workflowIds.length === 0) return new Map();
  const rows = await query
    .select({ ownerId: workflowTags.workflowId, tag: workflowTags.tag, version: workflowVersions.version })
    .from(workflowTags)
    .innerJoin(workflowVersions, eq(workflowVersions.id, workflowTags.versionId))
    .where(inArray(workflowTags.workflowId, workflowIds))
    .orderBy(asc(workflowTags.tag));
  return tagMapsOf(rows);
};

type PushInput = Parameters<WorkflowStore["pushVersion"]>[0];

const pushIn = async (tx: PostgresTransaction, input: PushInput) => {
  await tx
    .insert(workflows)
    .values({
      id: input.newWorkflowId,
      tenantId: input.tenantId,
      slug: input.slug,
      latestVersion: 0,
      createdAt: input.at,
      updatedAt: input.at,
    })
    .onConflictDoNothing({ target: [workflows.tenantId, workflows.slug] });
  // The row lock serializes concurrent pushes of one slug, across instances too.
  const [workflow] = await tx
    .select()
    .from(workflows)
    .where(and(eq(workflows.tenantId, input.tenantId), eq(workflows.slug, input.slug)))
    .for("update");
  if (!workflow) throw new Error(`workflow ${input.slug} vanished inside its transaction`);
  const newest =
    workflow.latestVersion > 0 ? await resolve(tx, input.tenantId, input.slug, { kind: "latest" }) : null;
  const { version, created } = landedVersion(input.contentHash, workflow.latestVersion, newest, (number) => ({
    id: input.newVersionId,
    workflowId: workflow.id,
    tenantId: input.tenantId,
    slug: input.slug,
    version: number,
    definition: input.definition,
    contentHash: input.contentHash,
    createdAt: input.at,
  }));
  if (created) {
    const { slug: _slug, ...row } = version;
    await tx.insert(workflowVersions).values(row);
    await tx
      .update(workflows)
      .set({ latestVersion: version.version, updatedAt: input.at })
      .where(eq(workflows.id, workflow.id));
  }
  for (const tag of new Set(input.tags)) await pointTag(tx, version, tag, input.at);
  return { version, created, tags: await tagsOfVersion(tx, version.id) };
};

/** Workflow definitions: versioned and tagged as prompts are (docs/WORKFLOWS.md "Storage"). */
const definitionStore = ({ db }: PostgresContext) => ({
  async pushVersion(input: PushInput) {
    return withConstraintErrors("workflow", () => db.transaction((tx) => pushIn(tx, input)));
  },

  async setTag(tenantId: string, slug: string, version: number, tag: string, at: Date) {
    return db.transaction(async (tx) => {
      const found = await resolve(tx, tenantId, slug, { kind: "number", version });
      if (found) await pointTag(tx, found, tag, at);
      return found;
    });
  },

  async resolveVersion(tenantId: string, slug: string, selector: VersionSelector) {
    return resolve(db, tenantId, slug, selector);
  },

  async tagsOf(versionId: string) {
    return tagsOfVersion(db, versionId);
  },

  async getWorkflow(tenantId: string, slug: string) {
    const [workflow] = await db
      .select(workflowRowColumns)
      .from(workflows)
      .leftJoin(workflowVersions, latestVersionJoin)
      .where(and(eq(workflows.tenantId, tenantId), eq(workflows.slug, slug)));
    if (!workflow) return null;
    return { ...workflow, tags: (await tagMaps(db, [workflow.id])).get(workflow.id) ?? {} };
  },

  async listWorkflows(tenantId: string, page: { cursor?: string | null; limit: number }) {
    const rows = await db
      .select(workflowRowColumns)
      .from(workflows)
      .leftJoin(workflowVersions, latestVersionJoin)
      .where(slugPageCondition(workflows, tenantId, page.cursor))
      .orderBy(asc(workflows.slug))
      .limit(page.limit + 1);
    const result = pageFrom(rows, page.limit, (row) => [row.slug]);
    const tags = await tagMaps(
      db,
      result.items.map((row) => row.id),
    );
    return {
      items: result.items.map((row) => ({ ...row, tags: tags.get(row.id) ?? {} })),
      nextCursor: result.nextCursor,
    };
  },

  async listVersions(tenantId: string, slug: string, page: { cursor?: string | null; limit: number }) {
    const rows = await db
      .select(versionColumns)
      .from(workflowVersions)
      .innerJoin(workflows, eq(workflows.id, workflowVersions.workflowId))
      .where(
        versionPageCondition({ owners: workflows, versions: workflowVersions }, tenantId, slug, page.cursor),
      )
      .orderBy(desc(workflowVersions.version))
      .limit(page.limit + 1);
    return pageFrom(rows, page.limit, (row) => [row.version]);
  },
});

type CreateRunArguments = Parameters<WorkflowStore["createRun"]>;

const createIn = async (tx: PostgresTransaction, ...[run, idempotency, options]: CreateRunArguments) => {
  await tx
    .insert(threads)
    .values({ tenantId: run.tenantId, id: run.threadId, createdAt: run.createdAt })
    .onConflictDoNothing();
  await tx
    .insert(workflowRuns)
    .values({ ...run, ...NEW_WORKFLOW_RUN_STATE, steps: toStoredSteps(run.steps) });
  if (!idempotency) return;
  // A concurrent claim of the key waits for this transaction, then finds it taken.
  const [taken] = await tx
    .insert(workflowIdempotencyKeys)
    .values(idempotency)
    .onConflictDoUpdate(
      idempotencyTakeover(workflowIdempotencyKeys, idempotency, options?.idempotencyExpiredBefore),
    )
    .returning({ runId: workflowIdempotencyKeys.runId });
  if (!taken) throw idempotencyConflict();
};

/**
 * The compare-and-set of an advance. Its UPDATE is the transaction's first statement, so the
 * workflow run's row is locked before anything else: two advances of one run queue on it (the
 * loser re-checks the revision after the winner's commit and writes nothing) and never deadlock.
 */
const advanceIn = async (
  tx: PostgresTransaction,
  ...[id, expectedRevision, change]: Parameters<WorkflowStore["advance"]>
): Promise<boolean> => {
  const [advanced] = await tx
    .update(workflowRuns)
    .set({ ...advancedRunChanges(change), revision: sql`${workflowRuns.revision} + 1` })
    .where(and(eq(workflowRuns.id, id), eq(workflowRuns.revision, expectedRevision), isPending))
    .returning({ id: workflowRuns.id });
  if (!advanced) return false;
  if (change.newRuns.length > 0) await insertRunRows(tx, change.newRuns);
  await insertDeliveries(tx, change.end?.deliveries ?? []);
  return true;
};

/** Workflow runs (docs/WORKFLOWS.md "Storage"): each write one transaction. */
const runStore = ({ db }: PostgresContext) => ({
  createRun(...args: CreateRunArguments) {
    return withConstraintErrors("workflow run", () => db.transaction((tx) => createIn(tx, ...args)));
  },

  async findIdempotency(tenantId: string, key: string, notBefore: Date) {
    const [row] = await db
      .select()
      .from(workflowIdempotencyKeys)
      .where(
        and(
          eq(workflowIdempotencyKeys.tenantId, tenantId),
          eq(workflowIdempotencyKeys.key, key),
          gte(workflowIdempotencyKeys.createdAt, notBefore),
        ),
      );
    return row ?? null;
  },

  async getRun(tenantId: string, id: string) {
    const [row] = await db
      .select(runColumns)
      .from(workflowRuns)
      .where(and(eq(workflowRuns.id, id), eq(workflowRuns.tenantId, tenantId)));
    return row ? toWorkflowRunRecord(row) : null;
  },

  async getRunById(id: string) {
    const [row] = await db.select(runColumns).from(workflowRuns).where(eq(workflowRuns.id, id));
    return row ? toWorkflowRunRecord(row) : null;
  },

  async listRuns(
    tenantId: string,
    filter: Parameters<WorkflowStore["listRuns"]>[1],
    page: { cursor?: string | null; limit: number },
  ) {
    const rows = await db
      .select(runColumns)
      .from(workflowRuns)
      .where(workflowRunListCondition(workflowRuns, tenantId, filter, page.cursor))
      .orderBy(desc(workflowRuns.createdAt), desc(workflowRuns.id))
      .limit(page.limit + 1);
    return workflowRunPage(rows, page.limit);
  },

  async listPendingRunIds() {
    const rows = await db
      .select({ id: workflowRuns.id })
      .from(workflowRuns)
      .where(isPending)
      .orderBy(asc(workflowRuns.createdAt), asc(workflowRuns.id));
    return rows.map((row) => row.id);
  },

  advance(...args: Parameters<WorkflowStore["advance"]>) {
    return withConstraintErrors("workflow run step", () => db.transaction((tx) => advanceIn(tx, ...args)));
  },

  async listOrphanedStepRuns(limit: number) {
    const rows = await db
      .select({ id: runs.id })
      .from(runs)
      .innerJoin(workflowRuns, eq(workflowRuns.id, runs.workflowRunId))
      .where(and(sql`${runs.status} = 'pending'`, ne(workflowRuns.status, "pending")))
      .orderBy(asc(runs.createdAt), asc(runs.id))
      .limit(limit);
    return rows.map((row) => row.id);
  },
});

export const createWorkflowStore = (context: PostgresContext): WorkflowStore => ({
  ...definitionStore(context),
  ...runStore(context),
});
